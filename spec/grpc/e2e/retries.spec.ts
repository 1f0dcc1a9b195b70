// End to end: the route's retry policy (gRFC A44), else its virtual host's, as grpc-js retries.
// A backend fails its next N RPCs with a status and then answers; the count of RPCs it saw is
// the number of attempts the channel made.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { edsCluster, endpoints, type JsonObject } from '../../../lib/testing';
import type { Backend } from '../helpers/backends';
import {
  everything,
  routes,
  rpcError,
  sendRpc,
  startXdsEnv,
  waitForAllOn,
  type XdsEnv,
} from '../helpers/xds-env';

/** A retry policy: `retry_on`, `num_retries`, and a 10 ms base backoff. */
function retryPolicy(retryOn: string, numRetries: number): JsonObject {
  return { retry_on: retryOn, num_retries: numRetries, retry_back_off: { base_interval: '0.01s' } };
}

function metadata(entries: Record<string, string>): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [key, value] of Object.entries(entries)) md.set(key, value);
  return md;
}

describe('e2e: retries (A44)', () => {
  let env: XdsEnv;
  let a: Backend;
  beforeEach(async () => {
    env = await startXdsEnv(['a']);
    a = env.backends.a!;
  });
  afterEach(() => env.close());

  /**
   * Serves cluster "echo" over backend a with these routes (in a virtual host with the fields
   * `virtualHost`), and waits for a to answer on a new client.
   */
  async function serve(
    routeList: readonly JsonObject[],
    options: grpc.ChannelOptions = {},
    virtualHost: JsonObject = {},
  ) {
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a') }])],
    });
    const config = routes(routeList);
    const [vh] = config.virtual_hosts as JsonObject[];
    env.server.setResources('route', [{ ...config, virtual_hosts: [{ ...vh, ...virtualHost }] }]);
    const client = env.client(options);
    await waitForAllOn(client, 'a', { batch: 1, concurrency: 1 });
    return client;
  }

  /** Makes a fail its next `times` RPCs with `code`; returns the attempts seen since. */
  function failNext(times: number, code = grpc.status.UNAVAILABLE): () => number {
    a.behaviour = { code, times };
    const before = a.rpcs;
    return () => a.rpcs - before;
  }

  it('an RPC that fails twice with UNAVAILABLE succeeds under a 3-retry policy', async () => {
    const client = await serve([
      everything('echo', { retry_policy: retryPolicy('unavailable', 3) }),
    ]);
    const attempts = failNext(2);
    assert.equal(await sendRpc(client), 'a');
    assert.equal(attempts(), 3);
  });

  it('without a retry policy the same RPC fails at its first attempt', async () => {
    const client = await serve([everything('echo')]);
    const attempts = failNext(2);
    const error = await rpcError(client);
    assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
    assert.equal(error.details, 'a fails');
    assert.equal(attempts(), 1);
  });

  it('a status retry_on does not name is not retried', async () => {
    const client = await serve([
      everything('echo', { retry_policy: retryPolicy('cancelled,deadline-exceeded,5xx', 3) }),
    ]);
    const attempts = failNext(1);
    const error = await rpcError(client);
    assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
    assert.equal(attempts(), 1);
  });

  it('retry_on may name each supported code (here resource-exhausted and internal)', async () => {
    const client = await serve([
      everything('echo', { retry_policy: retryPolicy('resource-exhausted, internal', 3) }),
    ]);
    let attempts = failNext(1, grpc.status.RESOURCE_EXHAUSTED);
    assert.equal(await sendRpc(client), 'a');
    assert.equal(attempts(), 2);
    attempts = failNext(1, grpc.status.INTERNAL);
    assert.equal(await sendRpc(client), 'a');
    assert.equal(attempts(), 2);
  });

  it('num_retries bounds the attempts: 1 retry, two failures, the second is returned', async () => {
    const client = await serve([
      everything('echo', { retry_policy: retryPolicy('unavailable', 1) }),
    ]);
    const attempts = failNext(2);
    const error = await rpcError(client);
    assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
    assert.equal(attempts(), 2);
  });

  it('more than 4 retries make 5 attempts in all', async () => {
    const client = await serve([
      everything('echo', { retry_policy: retryPolicy('unavailable', 10) }),
    ]);
    const attempts = failNext(10);
    const error = await rpcError(client, { deadlineMs: 5000 });
    assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
    assert.equal(attempts(), 5);
  });

  it("the virtual host's policy applies to routes without one; a route's own policy wins", async () => {
    const client = await serve(
      [
        {
          match: { prefix: '', headers: [{ name: 'x-route', exact_match: 'own' }] },
          route: { cluster: 'echo', retry_policy: retryPolicy('internal', 3) },
        },
        everything('echo'),
      ],
      {},
      { retry_policy: retryPolicy('unavailable', 3) },
    );
    let attempts = failNext(1);
    assert.equal(await sendRpc(client), 'a');
    assert.equal(attempts(), 2);
    // The route with its own policy retries INTERNAL, not UNAVAILABLE.
    const own = { metadata: metadata({ 'x-route': 'own' }) };
    attempts = failNext(1);
    assert.equal((await rpcError(client, own)).code, grpc.status.UNAVAILABLE);
    assert.equal(attempts(), 1);
    attempts = failNext(1, grpc.status.INTERNAL);
    assert.equal(await sendRpc(client, own), 'a');
    assert.equal(attempts(), 2);
  });

  it("the channel option grpc.enable_retries: 0 turns the route's retries off", async () => {
    const client = await serve(
      [everything('echo', { retry_policy: retryPolicy('unavailable', 3) })],
      { 'grpc.enable_retries': 0 },
    );
    const attempts = failNext(2);
    const error = await rpcError(client);
    assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
    assert.equal(attempts(), 1);
  });
});
