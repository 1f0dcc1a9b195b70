// `xds_client.weighted_target` (gRFC A28, A56): locality weights. Picking and state aggregation
// are checked against hand-driven fake children; weights, READY-only picking, removed targets
// and channel close end to end, by where real RPCs land on real backends.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { connectivityState, experimental, status } from '@grpc/grpc-js';
import { POLICY } from '../../../lib/grpc/names';
import { withPath } from '../../../lib/grpc/lb/common/hierarchy';
import {
  NO_TARGETS_MESSAGE,
  registerWeightedTargetPolicy,
  WEIGHTED_TARGET_RETENTION_OPTION,
  WeightedTargetConfig,
  WeightedTargetLoadBalancer,
} from '../../../lib/grpc/lb/weighted-target/weighted-target';
import {
  sendRpcs,
  startSilentServer,
  trackTimers,
  waitUntil,
  type Backend,
} from '../helpers/backends';
import {
  channelHarness,
  fake,
  fakeChild,
  FakeConfig,
  lifecycle,
  onFakeUpdate,
  pick,
  recording,
  registerTestPolicies,
  underFakeParent,
} from './test-policies';

const { CONNECTING, IDLE, READY, TRANSIENT_FAILURE } = connectivityState;
const LB_TIMERS = /lib[\\/]grpc[\\/]lb[\\/]/;

registerWeightedTargetPolicy();
registerTestPolicies();

/** A policy under test whose targets are fakes named by their ids. */
function fakePolicy() {
  const { helper, lb, update: send } = underFakeParent((h) => new WeightedTargetLoadBalancer(h));
  const update = (
    targets: Record<string, number>,
    options: Record<string, number> = {},
    endpoints: experimental.Endpoint[] = [],
  ) =>
    send(
      new WeightedTargetConfig(
        Object.entries(targets).map(([name, weight]) => ({
          name,
          weight,
          config: new FakeConfig(name),
        })),
      ),
      options,
      endpoints,
    );
  return { helper, lb, update };
}

const child = (id: string) => fakeChild(id, 'target');

describe('xds_client.weighted_target config', () => {
  it('parses the JSON form and inverts it', () => {
    const config = WeightedTargetConfig.createFromJson({
      targets: {
        la: { weight: 3, child_policy: [{ round_robin: {} }] },
        lb: { weight: 1, child_policy: [{ no_such_policy: {} }, { pick_first: {} }] },
      },
    });
    assert.deepEqual(
      config.targets.map((t) => [t.name, t.weight, t.config.getLoadBalancerName()]),
      [
        ['la', 3, 'round_robin'],
        ['lb', 1, 'pick_first'],
      ],
    );
    const json = config.toJsonObject() as Record<string, unknown>;
    assert.deepEqual(Object.keys(json), [POLICY.weightedTarget]);
    assert.deepEqual(
      WeightedTargetConfig.createFromJson(json[POLICY.weightedTarget]).toJsonObject(),
      json,
    );
    assert.ok(experimental.parseLoadBalancingConfig(json as never) instanceof WeightedTargetConfig);
  });

  it('throws a clear error on invalid JSON', () => {
    const rr = [{ round_robin: {} }];
    const cases: [unknown, RegExp][] = [
      [[], /Error: config must be an object/],
      [{ targets: null }, /targets must be an object/],
      [{ targets: { la: 3 } }, /targets\["la"\] must be an object/],
      [{ targets: { la: { child_policy: rr } } }, /targets\["la"\]\.weight: must be an integer/],
      [{ targets: { la: { weight: 0, child_policy: rr } } }, /weight: .*\(got 0\)/],
      [{ targets: { la: { weight: 1.5, child_policy: rr } } }, /weight: .*\(got 1\.5\)/],
      [{ targets: { la: { weight: 2 ** 32, child_policy: rr } } }, /weight: must be an integer/],
      [{ targets: { la: { weight: 1 } } }, /targets\["la"\]\.child_policy: expected an array/],
      [
        { targets: { la: { weight: 1, child_policy: [{ nope: {} }] } } },
        /child_policy: no usable LB policy \(Unrecognized load balancing config name nope\)/,
      ],
    ];
    for (const [json, message] of cases) {
      assert.throws(() => WeightedTargetConfig.createFromJson(json), message, JSON.stringify(json));
    }
  });
});

describe('xds_client.weighted_target picking and state (fake targets)', () => {
  it('gives each target its endpoints and reports once per update, before returning', () => {
    const { helper, update } = fakePolicy();
    onFakeUpdate('ep-a', (self) => self.report(READY));
    onFakeUpdate('ep-b', (self) => self.report(TRANSIENT_FAILURE));
    update({ 'ep-a': 1, 'ep-b': 1 }, {}, [
      withPath({ addresses: [{ host: '10.0.0.1', port: 80 }] }, ['ep-a']),
      withPath({ addresses: [{ host: '10.0.0.2', port: 80 }] }, ['ep-b']),
    ]);
    assert.equal(helper.reports.length, 1);
    assert.equal(helper.last?.state, READY);
    const got = child('ep-a').updates[0]!.endpoints;
    assert.ok(got.ok);
    assert.deepEqual(got.value, [
      { addresses: [{ host: '10.0.0.1', port: 80 }], xdsClientPath: [] },
    ]);
  });

  it('picks READY targets only, by weight, and returns their pick results untouched', () => {
    const { helper, update } = fakePolicy();
    update({ 'pk-a': 3, 'pk-b': 1, 'pk-c': 5, 'pk-d': 5 });
    child('pk-a').report(READY);
    child('pk-b').report(READY);
    child('pk-c').report(CONNECTING);
    child('pk-d').report(TRANSIENT_FAILURE);
    assert.equal(helper.last?.state, READY);
    const a = child('pk-a').pickResult;
    const b = child('pk-b').pickResult;
    const counts = new Map<unknown, number>();
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const result = pick(helper.last!.picker);
      counts.set(result, (counts.get(result) ?? 0) + 1);
    }
    assert.deepEqual(new Set(counts.keys()), new Set([a, b]), 'the very objects, nothing else');
    // 3:1 → 0.75; the standard deviation at this n is 0.003.
    const share = counts.get(a)! / n;
    assert.ok(Math.abs(share - 0.75) < 0.02, `share of pk-a ${share}`);
  });

  it('is CONNECTING if any target is, else IDLE (a pick wakes the targets), else TRANSIENT_FAILURE with the first target’s error', async () => {
    const { helper, update } = fakePolicy();
    update({ 'st-a': 1, 'st-b': 1, 'st-c': 1 });
    child('st-a').report(TRANSIENT_FAILURE, 'a is down');
    child('st-b').report(IDLE);
    assert.equal(helper.last?.state, CONNECTING, 'st-c has not reported');
    child('st-c').report(TRANSIENT_FAILURE, 'c is down');
    assert.equal(helper.last?.state, IDLE);
    assert.equal(pick(helper.last!.picker).pickResultType, experimental.PickResultType.QUEUE);
    await waitUntil('exitIdle', () => child('st-b').exitIdleCalls > 0);
    child('st-b').report(TRANSIENT_FAILURE, 'b is down');
    assert.equal(helper.last?.state, TRANSIENT_FAILURE);
    assert.equal(helper.last?.message, 'a is down');
    const result = pick(helper.last!.picker);
    assert.equal(result.status?.code, status.UNAVAILABLE);
    assert.equal(result.status?.details, 'a is down');
  });

  it('is TRANSIENT_FAILURE with its own message without targets', () => {
    const { helper, update } = fakePolicy();
    update({});
    assert.equal(helper.last?.state, TRANSIENT_FAILURE);
    assert.equal(pick(helper.last!.picker).status?.details, NO_TARGETS_MESSAGE);
  });

  it('stops using a removed target at once, reuses it if it comes back, and destroys it after the retention', async () => {
    const { helper, update } = fakePolicy();
    const options = { [WEIGHTED_TARGET_RETENTION_OPTION]: 30 };
    update({ 'rm-a': 1, 'rm-b': 1 }, options);
    child('rm-a').report(READY);
    const b = child('rm-b');
    b.report(READY);
    update({ 'rm-a': 1 }, options);
    for (let i = 0; i < 100; i++) assert.equal(pick(helper.last!.picker), child('rm-a').pickResult);
    const reports = helper.reports.length;
    b.report(CONNECTING);
    assert.equal(helper.reports.length, reports, 'a removed target’s news is not reported');
    update({ 'rm-a': 1, 'rm-b': 1 }, options);
    assert.equal(fake('rm-b'), b, 'back before its retention ran out: the same child');
    update({ 'rm-a': 1 }, options);
    await waitUntil('rm-b destroyed', () => b.destroyed);
    assert.equal(b.destroyed, true);
  });

  it('passes re-resolution requests up, forwards exitIdle and resetBackoff', () => {
    const { helper, lb, update } = fakePolicy();
    update({ 'fw-a': 1, 'fw-b': 1 });
    child('fw-b').requestReresolution();
    assert.equal(helper.reresolutionRequests, 1);
    lb.exitIdle();
    lb.resetBackoff();
    for (const id of ['fw-a', 'fw-b']) {
      assert.equal(child(id).exitIdleCalls, 1);
      assert.equal(child(id).resetBackoffCalls, 1);
    }
  });

  it('destroys every target, retained ones included, and clears their timers on destroy', () => {
    const timers = trackTimers(LB_TIMERS);
    try {
      const { lb, update } = fakePolicy();
      update({ 'ds-a': 1, 'ds-b': 1 });
      update({ 'ds-a': 1 }); // ds-b retained for 15 min
      assert.equal(timers.pending().length, 1);
      assert.equal(timers.pending()[0]!.hasRef(), false, 'the timer never holds the process');
      lb.destroy();
      assert.ok(child('ds-a').destroyed && child('ds-b').destroyed);
      assert.deepEqual(timers.pending(), []);
    } finally {
      timers.stop();
    }
  });
});

describe('xds_client.weighted_target through a grpc-js channel', () => {
  const harness = channelHarness('xds-client-lb-test-weighted-target', ['a1', 'a2', 'b', 'c']);
  const { resolver, client } = harness;
  let a1: Backend, a2: Backend, b: Backend, c: Backend;
  before(() => {
    [a1, a2, b, c] = harness.backends as [Backend, Backend, Backend, Backend];
  });

  const roundRobin = { round_robin: {} };
  function weightedTarget(targets: [string, number, object?][]): object {
    return {
      [POLICY.weightedTarget]: {
        targets: Object.fromEntries(
          targets.map(([name, weight, child]) => [
            name,
            { weight, child_policy: [child ?? roundRobin] },
          ]),
        ),
      },
    };
  }

  it('splits RPCs 3:1 between two localities', async () => {
    resolver.set(
      'weights',
      [a1.endpoint(['la']), a2.endpoint(['la']), b.endpoint(['lb'])],
      weightedTarget([
        ['la', 3],
        ['lb', 1],
      ]),
    );
    const rpcs = client('weights');
    // Every locality READY first, so the split is the steady one.
    await waitUntil('all three serving', async () => (await sendRpcs(rpcs, 20)).size === 3);
    const n = 1000;
    const counts = await sendRpcs(rpcs, n);
    const la = (counts.get('a1') ?? 0) + (counts.get('a2') ?? 0);
    assert.equal(la + (counts.get('b') ?? 0), n, JSON.stringify([...counts]));
    // 0.75 expected; the standard deviation at n = 1000 is 0.014, so ±0.05 is 3.6 of them.
    const share = la / n;
    assert.ok(Math.abs(share - 0.75) <= 0.05, `share of la ${share}`);
    // Within la, round_robin alternates.
    assert.ok(
      Math.abs(counts.get('a1')! - counts.get('a2')!) <= 0.1 * la,
      JSON.stringify([...counts]),
    );
  });

  it('sends RPCs only to READY localities', async () => {
    const silent = await startSilentServer();
    await c.stop();
    resolver.set(
      'ready-only',
      [a1.endpoint(['ok']), silent.endpoint(['connecting']), c.endpoint(['failing'])],
      weightedTarget([
        ['ok', 1],
        ['connecting', 10],
        ['failing', 10],
      ]),
    );
    const counts = await sendRpcs(client('ready-only'), 100);
    assert.deepEqual([...counts], [['a1', 100]]);
    await silent.stop();
  });

  it('sends no more RPCs to a removed locality, and destroys it after its retention', async () => {
    const both = weightedTarget([
      ['rl-a', 1, recording('rl-a', roundRobin)],
      ['rl-b', 1, recording('rl-b', roundRobin)],
    ]);
    const endpoints = [a1.endpoint(['rl-a']), b.endpoint(['rl-b'])];
    resolver.set('removed', endpoints, both);
    const rpcs = client('removed', { [WEIGHTED_TARGET_RETENTION_OPTION]: 300 });
    await waitUntil('both serving', async () => (await sendRpcs(rpcs, 20)).size === 2);
    const removedAt = Date.now();
    resolver.set(
      'removed',
      endpoints,
      weightedTarget([['rl-a', 1, recording('rl-a', roundRobin)]]),
    );
    assert.ok(!lifecycle.includes('destroyed rl-b'), 'kept for its retention');
    const before = b.rpcs;
    assert.deepEqual([...(await sendRpcs(rpcs, 100))], [['a1', 100]]);
    assert.equal(b.rpcs, before);
    await waitUntil('rl-b destroyed', () => lifecycle.includes('destroyed rl-b'));
    assert.ok(Date.now() - removedAt >= 300);
    assert.ok(!lifecycle.includes('destroyed rl-a'));
  });
});
