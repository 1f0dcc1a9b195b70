// Fault injection as the ConfigSelector applies it (gRFC A33), without a channel:
//   - decideFault: what the dice and the headers say for one RPC, with a scripted random source;
//   - FaultInjection: which config an RPC gets (the most specific override, A39);
//   - the per-RPC filter: delays on the mock clock, aborts, max_active_faults, and the call's end
//     (deadline, cancellation) stopping a delay.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Metadata, experimental, status, type StatusObject } from '@grpc/grpc-js';
import {
  ABORT_DETAILS,
  FaultInjection,
  activeFaultCount,
  decideFault,
} from '../../lib/grpc/fault-injection';
import type { HttpConnectionManagerConfig } from '../../lib/resources/listener';
import type {
  FaultInjectionConfig,
  FaultPercentage,
  FilterOverride,
  Route,
  VirtualHost,
} from '../../lib/resources/route-config';
import { mockClock, realClock } from '../helpers/clock';

const FAULT_URL = 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault';
const ROUTER_URL = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
const ALWAYS: FaultPercentage = { numerator: 100, denominator: 100 };

/** A random source that returns `values` in order and fails the test if asked for more. */
function scripted(...values: number[]): () => number {
  return () => {
    assert.ok(values.length > 0, 'random() called more often than expected');
    return values.shift()!;
  };
}

const NO_DRAW = scripted();

function md(entries: Record<string, string | string[]> = {}): Metadata {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(entries)) {
    for (const v of Array.isArray(value) ? value : [value]) metadata.add(key, v);
  }
  return metadata;
}

function fixedDelay(delayMs: number, percentage = ALWAYS): FaultInjectionConfig {
  return { delay: { type: 'fixed', delayMs, percentage } };
}

function grpcAbort(code: number, percentage = ALWAYS): FaultInjectionConfig {
  return { abort: { type: 'grpc', code, percentage } };
}

describe('decideFault', () => {
  it('delays and aborts at 100 % without drawing, and never at 0 %', () => {
    const config: FaultInjectionConfig = { ...fixedDelay(250), ...grpcAbort(status.NOT_FOUND) };
    assert.deepEqual(decideFault(config, md(), NO_DRAW), {
      delayMs: 250,
      abortCode: status.NOT_FOUND,
    });
    const never = { numerator: 0, denominator: 100 } as const;
    const off = { ...fixedDelay(250, never), ...grpcAbort(status.NOT_FOUND, never) };
    assert.deepEqual(decideFault(off, md(), NO_DRAW), { delayMs: 0, abortCode: undefined });
  });

  it('reads the percentage in every denominator: 1 in 100, in 10,000, in a million', () => {
    for (const denominator of [100, 10_000, 1_000_000] as const) {
      const config = grpcAbort(status.INTERNAL, { numerator: 1, denominator });
      const hit = (1 - 1e-9) / denominator; // the last draw that lands on the first slot
      const miss = 1 / denominator;
      assert.equal(decideFault(config, md(), scripted(hit)).abortCode, status.INTERNAL);
      assert.equal(
        decideFault(config, md(), scripted(miss)).abortCode,
        undefined,
        `${denominator}`,
      );
    }
  });

  it('treats a numerator above the denominator as always', () => {
    const config = grpcAbort(status.INTERNAL, { numerator: 500, denominator: 100 });
    assert.equal(decideFault(config, md(), NO_DRAW).abortCode, status.INTERNAL);
  });

  it('draws the delay and the abort independently, the delay first', () => {
    const half = { numerator: 50, denominator: 100 } as const;
    const config = { ...fixedDelay(10, half), ...grpcAbort(status.ABORTED, half) };
    assert.deepEqual(decideFault(config, md(), scripted(0.4, 0.6)), {
      delayMs: 10,
      abortCode: undefined,
    });
    assert.deepEqual(decideFault(config, md(), scripted(0.6, 0.4)), {
      delayMs: 0,
      abortCode: status.ABORTED,
    });
  });

  it('a fixed delay of 0 is no delay', () => {
    assert.equal(decideFault(fixedDelay(0), md(), NO_DRAW).delayMs, 0);
  });

  it('header_delay takes the delay from x-envoy-fault-delay-request; none or invalid: no delay', () => {
    const config: FaultInjectionConfig = { delay: { type: 'header', percentage: ALWAYS } };
    const delay = (headers: Record<string, string | string[]>) =>
      decideFault(config, md(headers), NO_DRAW).delayMs;
    assert.equal(delay({ 'x-envoy-fault-delay-request': '250' }), 250);
    assert.equal(delay({}), 0);
    for (const bad of ['abc', '-5', '1.5', '', '0x10']) {
      assert.equal(delay({ 'x-envoy-fault-delay-request': bad }), 0, bad);
    }
    assert.equal(delay({ 'x-envoy-fault-delay-request': ['x', ' 40 ', '50'] }), 40);
  });

  it('a percentage header lowers the numerator of a header fault, never raises it', () => {
    const config: FaultInjectionConfig = {
      delay: { type: 'header', percentage: { numerator: 50, denominator: 100 } },
    };
    const headers = (pct?: string) =>
      md({
        'x-envoy-fault-delay-request': '5',
        ...(pct === undefined ? {} : { 'x-envoy-fault-delay-request-percentage': pct }),
      });
    // 0.45 falls under 50 % but not under 40 %.
    assert.equal(decideFault(config, headers(), scripted(0.45)).delayMs, 5);
    assert.equal(decideFault(config, headers('40'), scripted(0.45)).delayMs, 0);
    assert.equal(decideFault(config, headers('80'), scripted(0.55)).delayMs, 0);
    assert.equal(decideFault(config, headers('junk'), scripted(0.45)).delayMs, 5);
    assert.equal(decideFault(config, headers('0'), NO_DRAW).delayMs, 0);
  });

  it('the percentage header is ignored for a fixed fault', () => {
    const config = fixedDelay(5, { numerator: 50, denominator: 100 });
    const headers = md({ 'x-envoy-fault-delay-request-percentage': '0' });
    assert.equal(decideFault(config, headers, scripted(0.45)).delayMs, 5);
  });

  it('header_abort: the HTTP status header (mapped) wins over the gRPC one; invalid ones are ignored', () => {
    const config: FaultInjectionConfig = { abort: { type: 'header', percentage: ALWAYS } };
    const code = (headers: Record<string, string>) =>
      decideFault(config, md(headers), NO_DRAW).abortCode;
    assert.equal(code({}), undefined);
    assert.equal(code({ 'x-envoy-fault-abort-request': '503' }), status.UNAVAILABLE);
    assert.equal(code({ 'x-envoy-fault-abort-request': '404' }), status.UNIMPLEMENTED);
    assert.equal(code({ 'x-envoy-fault-abort-request': '200' }), status.UNKNOWN);
    assert.equal(code({ 'x-envoy-fault-abort-grpc-request': '5' }), status.NOT_FOUND);
    assert.equal(code({ 'x-envoy-fault-abort-grpc-request': '0' }), status.OK);
    assert.equal(code({ 'x-envoy-fault-abort-grpc-request': '99' }), status.UNKNOWN);
    assert.equal(
      code({ 'x-envoy-fault-abort-request': '403', 'x-envoy-fault-abort-grpc-request': '5' }),
      status.PERMISSION_DENIED,
    );
    assert.equal(
      code({ 'x-envoy-fault-abort-request': '700', 'x-envoy-fault-abort-grpc-request': '5' }),
      status.NOT_FOUND,
    );
    assert.equal(code({ 'x-envoy-fault-abort-grpc-request': 'NOT_FOUND' }), undefined);
  });

  it('x-envoy-fault-abort-request-percentage lowers a header abort', () => {
    const config: FaultInjectionConfig = { abort: { type: 'header', percentage: ALWAYS } };
    const headers = md({
      'x-envoy-fault-abort-grpc-request': '5',
      'x-envoy-fault-abort-request-percentage': '30',
    });
    assert.equal(decideFault(config, headers, scripted(0.29)).abortCode, status.NOT_FOUND);
    assert.equal(decideFault(config, headers, scripted(0.3)).abortCode, undefined);
  });

  it('an http_status abort uses the code it was mapped to', () => {
    const config: FaultInjectionConfig = {
      abort: { type: 'http', httpStatus: 503, code: status.UNAVAILABLE, percentage: ALWAYS },
    };
    assert.equal(decideFault(config, md(), NO_DRAW).abortCode, status.UNAVAILABLE);
  });
});

// ---- FaultInjection: which config an RPC gets ----

function hcmWith(...faults: [string, FaultInjectionConfig][]): HttpConnectionManagerConfig {
  return {
    routeConfigName: 'r',
    routeConfig: undefined,
    httpFilters: [
      ...faults.map(([name, fault]) => ({ name, typeUrl: FAULT_URL, isOptional: false, fault })),
      { name: 'router', typeUrl: ROUTER_URL, isOptional: false },
    ],
  };
}

function overrides(entries: Record<string, FaultInjectionConfig>): Map<string, FilterOverride> {
  return new Map(
    Object.entries(entries).map(([name, fault]) => [
      name,
      { typeUrl: FAULT_URL, isOptional: false, fault },
    ]),
  );
}

function routeTo(fields: Partial<Route> = {}): Route {
  return {
    match: { path: { type: 'prefix', prefix: '' }, caseSensitive: true, headers: [] },
    action: { type: 'cluster', cluster: 'c', hashPolicies: [] },
    ...fields,
  };
}

function vhWith(fields: Partial<VirtualHost> = {}): VirtualHost {
  return { name: 'vh', domains: ['*'], routes: [], skippedRoutes: 0, ...fields };
}

/** The abort codes the RPC's fault filters produce, in filter order (100 % aborts only). */
async function abortsOf(
  factories: readonly experimental.FilterFactory<experimental.Filter>[],
): Promise<number[]> {
  const codes: number[] = [];
  for (const factory of factories) {
    try {
      await factory.createFilter().sendMetadata(Promise.resolve(md()));
      codes.push(-1);
    } catch (e) {
      codes.push((e as StatusObject).code);
    }
  }
  return codes;
}

describe('FaultInjection (A39 overrides)', () => {
  it('costs nothing without a fault filter in the Listener', () => {
    assert.equal(FaultInjection.for(hcmWith(), vhWith()), undefined);
  });

  it("uses the Listener's config when nothing overrides it", async () => {
    const faults = FaultInjection.for(hcmWith(['f', grpcAbort(1)]), vhWith())!;
    assert.deepEqual(await abortsOf(faults.factoriesFor(routeTo(), 'c')), [1]);
  });

  it('the most specific override wins: weighted cluster, route, virtual host, Listener', async () => {
    const vh = vhWith({ typedPerFilterConfig: overrides({ f: grpcAbort(2) }) });
    const faults = FaultInjection.for(hcmWith(['f', grpcAbort(1)]), vh)!;
    const plain = routeTo();
    const ownRoute = routeTo({ typedPerFilterConfig: overrides({ f: grpcAbort(3) }) });
    const weighted = routeTo({
      typedPerFilterConfig: overrides({ f: grpcAbort(3) }),
      action: {
        type: 'weighted_clusters',
        hashPolicies: [],
        clusters: [
          { name: 'x', weight: 1, typedPerFilterConfig: overrides({ f: grpcAbort(4) }) },
          { name: 'y', weight: 1 },
        ],
      },
    });
    assert.deepEqual(await abortsOf(faults.factoriesFor(plain, 'c')), [2]);
    assert.deepEqual(await abortsOf(faults.factoriesFor(ownRoute, 'c')), [3]);
    assert.deepEqual(await abortsOf(faults.factoriesFor(weighted, 'x')), [4]);
    assert.deepEqual(await abortsOf(faults.factoriesFor(weighted, 'y')), [3]);
  });

  it('an override replaces the whole config: an empty one turns the faults off', () => {
    const route = routeTo({ typedPerFilterConfig: overrides({ f: {} }) });
    const faults = FaultInjection.for(hcmWith(['f', grpcAbort(1)]), vhWith())!;
    assert.deepEqual(faults.factoriesFor(route, 'c'), []);
  });

  it('max_active_faults 0 injects nothing', () => {
    const config = { ...grpcAbort(1), maxActiveFaults: 0 };
    const faults = FaultInjection.for(hcmWith(['f', config]), vhWith())!;
    assert.deepEqual(faults.factoriesFor(routeTo(), 'c'), []);
  });

  it('an override for a filter the Listener does not have is ignored', async () => {
    const route = routeTo({ typedPerFilterConfig: overrides({ other: grpcAbort(3) }) });
    const faults = FaultInjection.for(hcmWith(['f', grpcAbort(1)]), vhWith())!;
    assert.deepEqual(await abortsOf(faults.factoriesFor(route, 'c')), [1]);
  });

  it('each fault filter of the chain applies, in order, with its own overrides', async () => {
    const route = routeTo({ typedPerFilterConfig: overrides({ second: grpcAbort(5) }) });
    const faults = FaultInjection.for(
      hcmWith(['first', grpcAbort(1)], ['second', grpcAbort(2)]),
      vhWith(),
    )!;
    assert.deepEqual(await abortsOf(faults.factoriesFor(route, 'c')), [1, 5]);
  });

  it('builds the factories of a route and cluster once', () => {
    const faults = FaultInjection.for(hcmWith(['f', grpcAbort(1)]), vhWith())!;
    const route = routeTo();
    assert.equal(faults.factoriesFor(route, 'c'), faults.factoriesFor(route, 'c'));
  });
});

// ---- The per-RPC filter ----

/** One RPC's fault filter for `config`, its metadata sent; the promise never rejects unhandled. */
function startRpc(config: FaultInjectionConfig, random: () => number = NO_DRAW) {
  const faults = FaultInjection.for(hcmWith(['f', config]), vhWith(), random)!;
  const [factory] = faults.factoriesFor(routeTo(), 'c');
  assert.ok(factory, 'the config injects something');
  const filter = factory.createFilter();
  let outcome: { sent: Metadata } | { failed: StatusObject } | undefined;
  const done = filter.sendMetadata(Promise.resolve(md())).then(
    (sent) => (outcome = { sent }),
    (failed: StatusObject) => (outcome = { failed }),
  );
  return {
    filter,
    /** What the filter did with the metadata once settled. */
    outcome: async () => {
      await done;
      return outcome!;
    },
    /** Whether it has settled yet (after a few microtasks). */
    settled: async () => {
      for (let i = 0; i < 5; i++) await Promise.resolve();
      return outcome !== undefined;
    },
  };
}

describe('the fault filter of one RPC', () => {
  afterEach(() => realClock());

  it('holds the metadata back for the delay, counting an active fault meanwhile', async (t) => {
    const tick = mockClock(t, ['setTimeout']);
    const rpc = startRpc(fixedDelay(300));
    assert.equal(await rpc.settled(), false);
    assert.equal(activeFaultCount(), 1);
    tick(299);
    assert.equal(await rpc.settled(), false);
    tick(1);
    assert.ok('sent' in (await rpc.outcome()));
    assert.equal(activeFaultCount(), 0);
  });

  it('aborts with the code and "Fault injected" after the delay', async (t) => {
    const tick = mockClock(t, ['setTimeout']);
    const rpc = startRpc({ ...fixedDelay(50), ...grpcAbort(status.RESOURCE_EXHAUSTED) });
    assert.equal(await rpc.settled(), false);
    tick(50);
    const outcome = await rpc.outcome();
    assert.ok('failed' in outcome);
    assert.equal(outcome.failed.code, status.RESOURCE_EXHAUSTED);
    assert.equal(outcome.failed.details, ABORT_DETAILS);
    assert.equal(activeFaultCount(), 0);
  });

  it("the call's end (deadline, cancellation) stops the delay and fails the held metadata", async (t) => {
    const tick = mockClock(t, ['setTimeout']);
    const rpc = startRpc(fixedDelay(10_000));
    assert.equal(await rpc.settled(), false);
    const deadline = { code: status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' };
    rpc.filter.receiveTrailers({ ...deadline, metadata: new Metadata() });
    const outcome = await rpc.outcome();
    assert.ok('failed' in outcome);
    assert.equal(outcome.failed.code, status.DEADLINE_EXCEEDED);
    assert.equal(activeFaultCount(), 0);
    tick(10_000); // the timer is gone: nothing left to fire
    assert.equal(activeFaultCount(), 0);
  });

  it('a call already over when its metadata comes is not started', async () => {
    const faults = FaultInjection.for(hcmWith(['f', fixedDelay(10)]), vhWith())!;
    const filter = faults.factoriesFor(routeTo(), 'c')[0]!.createFilter();
    let release!: (m: Metadata) => void;
    const sent = filter.sendMetadata(new Promise<Metadata>((resolve) => (release = resolve)));
    filter.receiveTrailers({ code: status.CANCELLED, details: 'x', metadata: new Metadata() });
    release(md());
    await assert.rejects(sent, (e: StatusObject) => e.code === status.CANCELLED);
    assert.equal(activeFaultCount(), 0);
  });

  it('max_active_faults: delays beyond the limit are skipped, and so are aborts while it is reached', async (t) => {
    const tick = mockClock(t, ['setTimeout']);
    const limited = { ...fixedDelay(100), maxActiveFaults: 2 };
    const first = startRpc(limited);
    const second = startRpc(limited);
    const third = startRpc(limited);
    assert.equal(await third.settled(), true, 'the third RPC is not delayed');
    assert.equal(await first.settled(), false);
    assert.equal(activeFaultCount(), 2);
    const abort = startRpc({ ...grpcAbort(status.INTERNAL), maxActiveFaults: 2 });
    assert.ok('sent' in (await abort.outcome()), 'no abort while two faults are active');
    tick(100);
    await Promise.all([first.outcome(), second.outcome()]);
    assert.equal(activeFaultCount(), 0);
    const later = startRpc(limited);
    assert.equal(await later.settled(), false, 'delayed again once the others are done');
    tick(100);
    await later.outcome();
  });

  it('a delay longer than a Node timer can hold waits the longest one it can', async (t) => {
    const tick = mockClock(t, ['setTimeout']);
    const rpc = startRpc(fixedDelay(315_576_000_000_000));
    assert.equal(await rpc.settled(), false);
    tick(2 ** 31 - 1);
    assert.ok('sent' in (await rpc.outcome()));
  });
});
