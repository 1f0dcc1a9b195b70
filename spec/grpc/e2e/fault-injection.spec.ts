// End to end: client-side fault injection (gRFC A33) through a real channel on xds:///…: the
// Listener's HTTPFault filter, its per-virtual-host and per-route overrides (A39), aborts by
// code, by HTTP status and by header, percentages, delays and the RPC's deadline, and
// max_active_faults. Timings are lower bounds or wide margins; ratios have a tolerance.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { edsCluster, endpoints, type JsonObject } from '../../../lib/testing';
// Internal on purpose: no public view counts active faults (gRFC A33's max_active_faults).
import { activeFaultCount } from '../../../lib/grpc/fault-injection';
import { trackTimers, waitUntil, type Backend } from '../helpers/backends';
import {
  assertShare,
  everything,
  failedKey,
  routes,
  rpcError,
  sendRpc,
  sendRpcs,
  show,
  startXdsEnv,
  waitForAllOn,
  type XdsEnv,
} from '../helpers/xds-env';

const FAULT_URL = 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault';
const ROUTER_URL = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
const FILTER_CONFIG_URL = 'type.googleapis.com/envoy.config.route.v3.FilterConfig';
const ALWAYS = { numerator: 100, denominator: 'HUNDRED' };

/** An HTTPFault (proto3 JSON) as an Any. */
function fault(config: JsonObject): JsonObject {
  return { '@type': FAULT_URL, ...config };
}

/** An abort of every RPC with gRPC `code`. */
function abortWith(code: grpc.status): JsonObject {
  return { abort: { grpc_status: code, percentage: ALWAYS } };
}

/** HCM fields: a fault filter named "fault" with `config`, then the router. */
function faultFilter(config: JsonObject): JsonObject {
  return {
    http_filters: [
      { name: 'fault', typed_config: fault(config) },
      { name: 'router', typed_config: { '@type': ROUTER_URL } },
    ],
  };
}

function metadata(entries: Record<string, string>): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [key, value] of Object.entries(entries)) md.set(key, value);
  return md;
}

/** A route for RPCs whose header `x-route` is `value`. */
function onRoute(value: string, cluster: string, fields: JsonObject = {}): JsonObject {
  return {
    match: { prefix: '', headers: [{ name: 'x-route', exact_match: value }] },
    route: { cluster },
    ...fields,
  };
}

/** How one RPC ended and how long it took. */
async function timedRpc(client: grpc.Client, options: Parameters<typeof sendRpc>[1] = {}) {
  const start = Date.now();
  try {
    const answeredBy = await sendRpc(client, options);
    return { ok: true as const, answeredBy, ms: Date.now() - start };
  } catch (e) {
    const error = e as grpc.ServiceError;
    return { ok: false as const, code: error.code, details: error.details, ms: Date.now() - start };
  }
}

describe('e2e: fault injection (A33)', () => {
  let env: XdsEnv;
  let a: Backend;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b']);
    a = env.backends.a!;
  });
  afterEach(() => env.close());

  interface Setup {
    /** HCM fields (the fault filter). */
    hcm?: JsonObject;
    /** Routes of the one virtual host; default: everything to cluster a. */
    routes?: readonly JsonObject[];
    /** Fields of the virtual host (typed_per_filter_config). */
    virtualHost?: JsonObject;
  }

  /** Serves clusters a and b (over backends a and b) as `setup` says; returns a new client. */
  function serve(setup: Setup): grpc.Client {
    env.serve({
      clusters: [edsCluster('a'), edsCluster('b')],
      endpoints: [
        endpoints('a', [{ addresses: env.addresses('a') }]),
        endpoints('b', [{ addresses: env.addresses('b') }]),
      ],
      ...(setup.hcm ? { hcm: setup.hcm } : {}),
    });
    const config = routes(setup.routes ?? [everything('a')]);
    const [vh] = config.virtual_hosts as JsonObject[];
    env.server.setResources('route', [
      { ...config, virtual_hosts: [{ ...vh, ...setup.virtualHost }] },
    ]);
    return env.client();
  }

  it('abort 100 %: every RPC fails with the configured code and message, and none is sent', async () => {
    const client = serve({ hcm: faultFilter(abortWith(grpc.status.FAILED_PRECONDITION)) });
    const error = await rpcError(client);
    assert.equal(error.code, grpc.status.FAILED_PRECONDITION, error.details);
    assert.equal(error.details, 'Fault injected');
    const counts = await sendRpcs(client, 20);
    assert.deepEqual(Object.fromEntries(counts), {
      [failedKey(grpc.status.FAILED_PRECONDITION)]: 20,
    });
    assert.equal(a.rpcs, 0);
  });

  it('abort 50 % (5000 in ten thousand) fails about half of 400 RPCs', async () => {
    const percentage = { numerator: 5000, denominator: 'TEN_THOUSAND' };
    const client = serve({
      hcm: faultFilter({ abort: { grpc_status: grpc.status.RESOURCE_EXHAUSTED, percentage } }),
    });
    // Every RPC is answered or aborted: a long deadline keeps a loaded machine from a third outcome.
    const counts = await sendRpcs(client, 400, { concurrency: 20, deadlineMs: 20_000 });
    const failed = failedKey(grpc.status.RESOURCE_EXHAUSTED);
    assert.equal((counts.get('a') ?? 0) + (counts.get(failed) ?? 0), 400, show(counts));
    // One standard deviation of 400 draws at p = 0.5 is 2.5 %.
    assertShare(counts, failed, 0.5, 0.1);
    assert.equal(a.rpcs, counts.get('a'));
  });

  it('http_status 503 aborts with UNAVAILABLE', async () => {
    const client = serve({ hcm: faultFilter({ abort: { http_status: 503, percentage: ALWAYS } }) });
    const error = await rpcError(client);
    assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
    assert.equal(error.details, 'Fault injected');
    assert.equal(a.rpcs, 0);
  });

  it('grpc_status 0 ends the RPC with OK before it is sent (a unary call has no answer then)', async () => {
    const client = serve({ hcm: faultFilter(abortWith(grpc.status.OK)) });
    const error = await rpcError(client);
    // grpc-js's unary call turns an OK status without a message into this error (A33 allows it).
    assert.equal(error.code, grpc.status.UNIMPLEMENTED, error.details);
    assert.equal(error.details, 'No message received');
    assert.equal(a.rpcs, 0);
  });

  it('header_abort: an RPC aborts with the status its headers ask for, and only then', async () => {
    const client = serve({
      hcm: faultFilter({ abort: { header_abort: {}, percentage: ALWAYS } }),
    });
    assert.equal(await sendRpc(client), 'a');
    const cases: [Record<string, string>, grpc.status][] = [
      [{ 'x-envoy-fault-abort-grpc-request': '5' }, grpc.status.NOT_FOUND],
      [{ 'x-envoy-fault-abort-request': '404' }, grpc.status.UNIMPLEMENTED],
      [{ 'x-envoy-fault-abort-request': '429' }, grpc.status.UNAVAILABLE],
    ];
    for (const [headers, code] of cases) {
      const error = await rpcError(client, { metadata: metadata(headers) });
      assert.equal(error.code, code, `${JSON.stringify(headers)}: ${error.details}`);
    }
    const zeroPercent = {
      'x-envoy-fault-abort-grpc-request': '5',
      'x-envoy-fault-abort-request-percentage': '0',
    };
    assert.equal(await sendRpc(client, { metadata: metadata(zeroPercent) }), 'a');
  });

  it('a fixed delay holds an RPC back before it is sent, then it is answered', async () => {
    const client = serve({
      hcm: faultFilter({ delay: { fixed_delay: '0.3s', percentage: ALWAYS } }),
    });
    const rpc = await timedRpc(client);
    assert.ok(rpc.ok, `the delayed RPC failed: ${JSON.stringify(rpc)}`);
    assert.equal(rpc.answeredBy, 'a');
    assert.ok(rpc.ms >= 290, `took ${rpc.ms} ms, expected the 300 ms delay`);
  });
  it('header_delay delays an RPC by x-envoy-fault-delay-request ms', async () => {
    const client = serve({
      hcm: faultFilter({ delay: { header_delay: {}, percentage: ALWAYS } }),
    });
    await waitForAllOn(client, 'a', { batch: 1, concurrency: 1 });
    const plain = await timedRpc(client);
    assert.ok(plain.ok && plain.ms < 400, `no header, no delay: ${JSON.stringify(plain)}`);
    const delayed = await timedRpc(client, {
      metadata: metadata({ 'x-envoy-fault-delay-request': '500' }),
    });
    assert.ok(delayed.ok, JSON.stringify(delayed));
    assert.ok(delayed.ms >= 490, `took ${delayed.ms} ms, expected 500`);
  });
  it("a delay that runs past the RPC's deadline ends it with DEADLINE_EXCEEDED; it is never sent", async () => {
    const timers = trackTimers(/lib[\\/]grpc[\\/]fault-injection/);
    try {
      const client = serve({
        hcm: faultFilter({ delay: { fixed_delay: '5s', percentage: ALWAYS } }),
      });
      const rpc = await timedRpc(client, { deadlineMs: 300 });
      assert.equal(rpc.ok, false);
      assert.equal(rpc.ok || rpc.code, grpc.status.DEADLINE_EXCEEDED, JSON.stringify(rpc));
      assert.ok(rpc.ms < 2000, `ended after ${rpc.ms} ms, expected the 300 ms deadline`);
      // The delay's timer is gone with the RPC: nothing is sent later.
      assert.deepEqual(timers.pending(), []);
      assert.equal(a.rpcs, 0);
    } finally {
      timers.stop();
    }
  });

  it("a route's max_stream_duration is a deadline the delay runs past too", async () => {
    const client = serve({
      hcm: faultFilter({ delay: { fixed_delay: '5s', percentage: ALWAYS } }),
      routes: [everything('a', { max_stream_duration: { max_stream_duration: '0.2s' } })],
    });
    const rpc = await timedRpc(client, { deadlineMs: 5000 });
    assert.equal(rpc.ok || rpc.code, grpc.status.DEADLINE_EXCEEDED, JSON.stringify(rpc));
    assert.ok(rpc.ms < 2000, `ended after ${rpc.ms} ms, expected about 200`);
  });

  it("overrides: a route's replaces the Listener's config, the virtual host's applies elsewhere", async () => {
    const client = serve({
      hcm: faultFilter(abortWith(grpc.status.FAILED_PRECONDITION)),
      virtualHost: { typed_per_filter_config: { fault: fault(abortWith(grpc.status.ABORTED)) } },
      routes: [
        onRoute('quiet', 'a', { typed_per_filter_config: { fault: fault({}) } }),
        onRoute('own', 'a', {
          typed_per_filter_config: {
            fault: {
              '@type': FILTER_CONFIG_URL,
              config: fault(abortWith(grpc.status.OUT_OF_RANGE)),
            },
          },
        }),
        everything('a'),
      ],
    });
    const quiet = { metadata: metadata({ 'x-route': 'quiet' }) };
    const own = { metadata: metadata({ 'x-route': 'own' }) };
    assert.equal(await sendRpc(client, quiet), 'a');
    assert.equal((await rpcError(client, own)).code, grpc.status.OUT_OF_RANGE);
    assert.equal((await rpcError(client)).code, grpc.status.ABORTED);
  });

  it('max_active_faults limits how many RPCs are delayed at once', async () => {
    const client = serve({
      hcm: faultFilter({ delay: { fixed_delay: '1s', percentage: ALWAYS }, max_active_faults: 2 }),
    });
    // All six wait for the configuration, then meet the filter together.
    let answered = 0;
    const rpcs = Array.from({ length: 6 }, () =>
      timedRpc(client, { deadlineMs: 5000 }).then((rpc) => {
        answered++;
        return rpc;
      }),
    );
    await waitUntil('four RPCs are answered', () => answered >= 4);
    // Four went through at once; two are still held back, not yet sent.
    assert.equal(answered, 4);
    assert.equal(activeFaultCount(), 2);
    assert.equal(a.rpcs, 4);
    const all = await Promise.all(rpcs);
    assert.ok(
      all.every((rpc) => rpc.ok),
      JSON.stringify(all),
    );
    assert.equal(all.filter((rpc) => rpc.ms >= 990).length, 2, JSON.stringify(all));
    assert.equal(activeFaultCount(), 0);
  });
  it("aborted RPCs let go of their cluster: a route change then drops the old cluster's watch", async () => {
    const client = serve({
      hcm: faultFilter({}),
      routes: [
        {
          ...everything('a'),
          typed_per_filter_config: { fault: fault(abortWith(grpc.status.DATA_LOSS)) },
        },
      ],
    });
    const counts = await sendRpcs(client, 20);
    assert.deepEqual(Object.fromEntries(counts), { [failedKey(grpc.status.DATA_LOSS)]: 20 });

    const mark = env.server.requests.length;
    env.server.setResources('route', [routes([everything('b')])]);
    // Paced (an abort takes no time): the new routes, and cluster b, arrive within a moment.
    await waitUntil('RPCs are answered by b', async () => {
      const rpc = await timedRpc(client);
      return rpc.ok && rpc.answeredBy === 'b';
    });
    // No RPC holds cluster a any more: the channel unsubscribes from it and its endpoints.
    for (const type of ['.Cluster', '.ClusterLoadAssignment']) {
      await env.server.waitForRequest(
        (r) =>
          r.typeUrl.endsWith(type) &&
          r.resourceNames.includes('b') &&
          !r.resourceNames.includes('a'),
        { after: mark, timeoutMs: 3000 },
      );
    }
  });
});
