// `xds_client.priority` (gRFC A56). The algorithm is checked against hand-driven fake children
// (every state transition, no sockets); failover, failback, the failover timer and channel
// close are checked end to end, by where real RPCs land on real backends.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { connectivityState, experimental, status, type ServiceError } from '@grpc/grpc-js';
import { POLICY } from '../../../lib/grpc/names';
import { CHILD_POLICY_CACHE_ENV } from '../../../lib/grpc/environment';
import {
  DEFAULT_PRIORITY_RETENTION_MS,
  EMPTY_PRIORITY_LIST_MESSAGE,
  PRIORITY_FAILOVER_TIMEOUT_OPTION,
  PRIORITY_RETENTION_OPTION,
  PriorityConfig,
  PriorityLoadBalancer,
  registerPriorityPolicy,
} from '../../../lib/grpc/lb/priority/priority';
import { withPath } from '../../../lib/grpc/lb/common/hierarchy';
import { registerWeightedTargetPolicy } from '../../../lib/grpc/lb/weighted-target/weighted-target';
import {
  sendRpc,
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

registerPriorityPolicy();
registerWeightedTargetPolicy();
registerTestPolicies();

/** A policy under test with fake children named by `ids` (each child's name is its fake id). */
function fakePolicy() {
  const { helper, lb, update: send } = underFakeParent((h) => new PriorityLoadBalancer(h));
  const update = (
    ids: readonly string[],
    options: Record<string, number> = {},
    endpoints: experimental.Endpoint[] = [],
    ignore: readonly string[] = [],
  ) =>
    send(
      new PriorityConfig(
        ids.map((id) => ({
          name: id,
          config: new FakeConfig(id),
          ignoreReresolutionRequests: ignore.includes(id),
        })),
      ),
      options,
      endpoints,
      'a note',
    );
  return { helper, lb, update };
}

/** The fake child `id`, which must exist. */
const child = (id: string) => fakeChild(id);

describe('xds_client.priority config', () => {
  it('parses the JSON form, picking each child config as grpc-js does, and inverts it', () => {
    const config = PriorityConfig.createFromJson({
      children: {
        p0: { config: [{ round_robin: {} }], ignore_reresolution_requests: true },
        p1: { config: [{ no_such_policy: {} }, { pick_first: {} }] },
        unused: { config: [{ round_robin: {} }] },
      },
      priorities: ['p0', 'p1'],
    });
    assert.deepEqual(
      config.children.map((c) => [
        c.name,
        c.config.getLoadBalancerName(),
        c.ignoreReresolutionRequests,
      ]),
      [
        ['p0', 'round_robin', true],
        ['p1', 'pick_first', false],
      ],
    );
    const json = config.toJsonObject() as Record<string, unknown>;
    assert.deepEqual(Object.keys(json), [POLICY.priority]);
    assert.deepEqual(PriorityConfig.createFromJson(json[POLICY.priority]).toJsonObject(), json);
    // Through grpc-js's own parser, as a service config reaches it.
    const parsed = experimental.parseLoadBalancingConfig(json as never);
    assert.ok(parsed instanceof PriorityConfig);
  });

  it('throws a clear error on invalid JSON', () => {
    const cases: [unknown, RegExp][] = [
      [null, /Error: config must be an object/],
      [{ children: [], priorities: [] }, /children must be an object/],
      [{ children: {}, priorities: 'p0' }, /priorities must be an array/],
      [{ children: {}, priorities: [7] }, /priorities\[0\] not a string/],
      [{ children: {}, priorities: ['x'] }, /priorities\[0\] "x" has no entry in children/],
      [
        { children: { p0: { config: [{ nope: {} }] } }, priorities: ['p0'] },
        /children\["p0"\]\.config: no usable LB policy \(Unrecognized load balancing config name nope\)/,
      ],
      [{ children: { p0: { config: {} } }, priorities: ['p0'] }, /config: expected an array/],
      [
        {
          children: { p0: { config: [{ round_robin: {} }], ignore_reresolution_requests: 1 } },
          priorities: ['p0'],
        },
        /ignore_reresolution_requests not a boolean/,
      ],
      [
        { children: { p0: { config: [{ round_robin: {} }] } }, priorities: ['p0', 'p0'] },
        /child "p0" listed twice/,
      ],
    ];
    for (const [json, message] of cases) {
      assert.throws(() => PriorityConfig.createFromJson(json), message, JSON.stringify(json));
    }
  });
});

describe('xds_client.priority algorithm (fake children)', () => {
  it('creates children lazily, in priority order, and uses the first that works', () => {
    const { helper, update } = fakePolicy();
    update(['lz-p0', 'lz-p1', 'lz-p2']);
    // lz-p0 is connecting with its failover timer running: nothing below it exists.
    assert.ok(fake('lz-p0'));
    assert.equal(fake('lz-p1'), undefined);
    assert.equal(helper.last?.state, CONNECTING);
    child('lz-p0').report(TRANSIENT_FAILURE);
    assert.ok(fake('lz-p1'), 'the next priority is created when the first fails');
    assert.equal(fake('lz-p2'), undefined);
    child('lz-p1').report(READY);
    assert.equal(helper.last?.state, READY);
    assert.equal(pick(helper.last!.picker), child('lz-p1').pickResult, 'the pick is the child’s');
    child('lz-p0').report(READY);
    assert.equal(pick(helper.last!.picker), child('lz-p0').pickResult, 'back to the first');
    assert.equal(fake('lz-p2'), undefined);
  });

  it('reports once per parent update, before returning, whatever its children report meanwhile', () => {
    const { helper, update } = fakePolicy();
    onFakeUpdate('up-p0', (self) => self.report(TRANSIENT_FAILURE));
    onFakeUpdate('up-p1', (self) => {
      self.report(CONNECTING);
      self.report(READY);
    });
    const endpoints = [
      withPath({ addresses: [{ host: '10.0.0.1', port: 80 }] }, ['up-p0', 'l0']),
      withPath({ addresses: [{ host: '10.0.0.2', port: 80 }] }, ['up-p1', 'l1']),
      withPath({ addresses: [{ host: '10.0.0.3', port: 80 }] }, ['elsewhere']),
    ];
    update(['up-p0', 'up-p1'], { 'some.option': 1 }, endpoints);
    assert.equal(helper.reports.length, 1);
    assert.equal(helper.last?.state, READY);
    assert.equal(pick(helper.last!.picker), child('up-p1').pickResult);
    // Each child got its own endpoints, one path element shorter, and the channel's options.
    const got = child('up-p1').updates[0]!;
    assert.ok(got.endpoints.ok);
    assert.deepEqual(got.endpoints.value, [
      { addresses: [{ host: '10.0.0.2', port: 80 }], xdsClientPath: ['l1'] },
    ]);
    assert.equal(got.options['some.option'], 1);
    update(['up-p0', 'up-p1'], {}, endpoints);
    assert.equal(helper.reports.length, 2, 'both children reported during the update: one report');
  });

  it('passes a connecting child over when its failover timer fires, then falls back to the first connecting one', async () => {
    const { helper, update } = fakePolicy();
    onFakeUpdate('ft-p0', (self) => self.report(CONNECTING));
    onFakeUpdate('ft-p1', (self) => self.report(CONNECTING));
    const started = Date.now();
    update(['ft-p0', 'ft-p1'], { [PRIORITY_FAILOVER_TIMEOUT_OPTION]: 40 });
    assert.equal(helper.last?.picker, child('ft-p0').lastPicker);
    await waitUntil('ft-p1 chosen', () => helper.last?.picker === fake('ft-p1')?.lastPicker);
    assert.ok(Date.now() - started >= 40, 'not before the timeout');
    // ft-p1's own timer runs out too: nobody is pending, so the first CONNECTING child wins.
    await waitUntil('ft-p0 chosen again', () => helper.last?.picker === child('ft-p0').lastPicker);
  });

  it('restarts the failover timer when a working child starts connecting, not when a failed one retries', async () => {
    const { helper, update } = fakePolicy();
    update(['rs-p0', 'rs-p1'], { [PRIORITY_FAILOVER_TIMEOUT_OPTION]: 40 });
    child('rs-p0').report(TRANSIENT_FAILURE);
    child('rs-p1').report(READY);
    const p1Picker = child('rs-p1').lastPicker;
    // A child that failed and retries does not hold back a READY lower priority.
    child('rs-p0').report(CONNECTING);
    assert.equal(helper.last?.picker, p1Picker);
    child('rs-p0').report(READY);
    assert.equal(pick(helper.last!.picker), child('rs-p0').pickResult);
    // A working child that starts connecting again is waited for, for one timeout.
    child('rs-p0').report(CONNECTING);
    assert.equal(helper.last?.state, CONNECTING);
    assert.equal(helper.last?.picker, child('rs-p0').lastPicker);
    await waitUntil('rs-p1 chosen after the timeout', () => helper.last?.picker === p1Picker);
  });

  it('keeps a deactivated lower priority for reuse, and destroys it when its retention runs out', async () => {
    const { update } = fakePolicy();
    update(['dr-p0', 'dr-p1'], { [PRIORITY_RETENTION_OPTION]: 30 });
    child('dr-p0').report(TRANSIENT_FAILURE);
    const p1 = child('dr-p1');
    p1.report(READY);
    child('dr-p0').report(READY); // dr-p1 deactivated
    child('dr-p0').report(TRANSIENT_FAILURE); // and reactivated before its retention ran out
    assert.equal(fake('dr-p1'), p1);
    assert.equal(p1.destroyed, false);
    child('dr-p0').report(READY);
    await waitUntil('dr-p1 destroyed', () => p1.destroyed);
    // Chosen again later: a new child.
    child('dr-p0').report(TRANSIENT_FAILURE);
    assert.notEqual(fake('dr-p1'), p1);
    assert.equal(child('dr-p1').destroyed, false);
  });

  it('destroys a child dropped from the config at once (gRFC A115)', () => {
    const timers = trackTimers(LB_TIMERS);
    try {
      const { helper, update } = fakePolicy();
      update(['rm-p0', 'rm-p1']);
      child('rm-p0').report(TRANSIENT_FAILURE);
      child('rm-p1').report(READY);
      const p1 = child('rm-p1');
      update(['rm-p0']);
      assert.equal(p1.destroyed, true, 'destroyed by the update that dropped it');
      assert.equal(helper.last?.state, TRANSIENT_FAILURE, 'rm-p0 is what is left');
      assert.equal(timers.pending().length, 0, 'no retention timer');
      // Named again later: a new child, not the old one.
      update(['rm-p0', 'rm-p1']);
      assert.notEqual(child('rm-p1'), p1);
    } finally {
      timers.stop();
    }
  });

  it(`retains a dropped child for 15 minutes with ${CHILD_POLICY_CACHE_ENV}=true (A56)`, (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    process.env[CHILD_POLICY_CACHE_ENV] = 'true';
    try {
      const { helper, update } = fakePolicy();
      update(['rc-p0', 'rc-p1']);
      child('rc-p0').report(TRANSIENT_FAILURE);
      child('rc-p1').report(READY);
      const p1 = child('rc-p1');
      update(['rc-p0']);
      assert.equal(helper.last?.state, TRANSIENT_FAILURE, 'no longer used');
      const updatesBefore = p1.updates.length;
      t.mock.timers.tick(DEFAULT_PRIORITY_RETENTION_MS - 1);
      assert.equal(p1.destroyed, false, 'kept for the retention');
      t.mock.timers.tick(1);
      assert.equal(p1.destroyed, true, 'destroyed when it runs out');
      assert.equal(p1.updates.length, updatesBefore, 'a dropped child gets no updates');
    } finally {
      delete process.env[CHILD_POLICY_CACHE_ENV];
    }
  });

  it('passes re-resolution requests up only from children that do not ignore them', () => {
    const { helper, update } = fakePolicy();
    update(['rr-p0', 'rr-p1'], {}, [], ['rr-p0']);
    child('rr-p0').report(TRANSIENT_FAILURE);
    child('rr-p0').requestReresolution();
    assert.equal(helper.reresolutionRequests, 0);
    child('rr-p1').requestReresolution();
    assert.equal(helper.reresolutionRequests, 1);
  });

  it('sends exitIdle to the current child and resetBackoff to every child', () => {
    const { lb, update } = fakePolicy();
    update(['ei-p0', 'ei-p1']);
    child('ei-p0').report(TRANSIENT_FAILURE);
    child('ei-p1').report(IDLE);
    lb.exitIdle();
    assert.equal(child('ei-p1').exitIdleCalls, 1);
    assert.equal(child('ei-p0').exitIdleCalls, 0);
    lb.resetBackoff();
    assert.equal(child('ei-p0').resetBackoffCalls, 1);
    assert.equal(child('ei-p1').resetBackoffCalls, 1);
  });

  it('reports TRANSIENT_FAILURE with its own message for an empty priority list', () => {
    const { helper, update } = fakePolicy();
    update([]);
    assert.equal(helper.last?.state, TRANSIENT_FAILURE);
    assert.equal(helper.last?.message, EMPTY_PRIORITY_LIST_MESSAGE);
    const result = pick(helper.last!.picker);
    assert.equal(result.pickResultType, experimental.PickResultType.TRANSIENT_FAILURE);
    assert.equal(result.status?.code, status.UNAVAILABLE);
    assert.equal(result.status?.details, 'priority policy has an empty priority list');
  });

  it('reports the failing last child’s error when every priority fails', () => {
    const { helper, update } = fakePolicy();
    update(['tf-p0', 'tf-p1']);
    child('tf-p0').report(TRANSIENT_FAILURE, 'p0 is down');
    child('tf-p1').report(TRANSIENT_FAILURE, 'p1 is down');
    assert.equal(helper.last?.state, TRANSIENT_FAILURE);
    assert.equal(helper.last?.message, 'p1 is down');
    assert.equal(pick(helper.last!.picker).status?.details, 'p1 is down');
  });

  it('destroys every child and clears every timer on destroy, and reports nothing after', async () => {
    const timers = trackTimers(LB_TIMERS);
    try {
      const { helper, lb, update } = fakePolicy();
      update(['ds-p0', 'ds-p1']);
      child('ds-p0').report(TRANSIENT_FAILURE);
      child('ds-p1').report(TRANSIENT_FAILURE);
      child('ds-p0').report(READY); // ds-p1 deactivated: a 15 min retention timer
      child('ds-p0').report(CONNECTING); // a 10 s failover timer
      assert.equal(timers.pending().length, 2);
      assert.ok(
        timers.pending().every((t) => !t.hasRef()),
        'timers never hold the process',
      );
      const reports = helper.reports.length;
      lb.destroy();
      assert.ok(child('ds-p0').destroyed && child('ds-p1').destroyed);
      await waitUntil('timers cleared', () => timers.pending().length === 0, 2000);
      child('ds-p0').report(READY);
      assert.equal(helper.reports.length, reports);
    } finally {
      timers.stop();
    }
  });
});

describe('xds_client.priority through a grpc-js channel', () => {
  const harness = channelHarness('xds-client-lb-test-priority', ['a', 'b']);
  const { resolver, client } = harness;
  let a: Backend;
  let b: Backend;
  before(() => {
    [a, b] = harness.backends as [Backend, Backend];
  });

  /** A priority of `children` ([name, child LB config JSON, ignore re-resolution]). */
  function priority(children: [string, object][]): object {
    return {
      [POLICY.priority]: {
        children: Object.fromEntries(
          children.map(([name, config]) => [name, { config: [config] }]),
        ),
        priorities: children.map(([name]) => name),
      },
    };
  }
  const roundRobin = { round_robin: {} };
  const weightedTarget = (locality: string) => ({
    [POLICY.weightedTarget]: { targets: { [locality]: { weight: 1, child_policy: [roundRobin] } } },
  });
  const allFrom = async (c: ReturnType<typeof client>, backend: string) =>
    (await sendRpcs(c, 10, { deadlineMs: 500 })).get(backend) === 10;

  it('fails over when the first priority’s backends go down, and back when they return', async () => {
    resolver.set(
      'failover',
      [a.endpoint(['fo-p0', 'la']), b.endpoint(['fo-p1', 'lb'])],
      priority([
        ['fo-p0', recording('fo-p0', weightedTarget('la'))],
        ['fo-p1', recording('fo-p1', weightedTarget('lb'))],
      ]),
    );
    const c = client('failover');
    assert.deepEqual([...(await sendRpcs(c, 20))], [['a', 20]]);
    assert.ok(lifecycle.includes('created fo-p0'));
    assert.ok(!lifecycle.includes('created fo-p1'), 'a lower priority is created only when needed');

    await a.stop();
    await waitUntil('RPCs on b', () => allFrom(c, 'b'));
    await a.start();
    await waitUntil('RPCs back on a', () => allFrom(c, 'a'));
    await a.stop();
    await waitUntil('RPCs on b again', () => allFrom(c, 'b'));
    // fo-p1 was deactivated, not destroyed, between the two failovers: reused.
    assert.deepEqual(
      lifecycle.filter((e) => e.endsWith(' fo-p1')),
      ['created fo-p1'],
    );
  });

  it('passes over a priority stuck connecting once the failover timer fires', async () => {
    const silent = await startSilentServer();
    resolver.set(
      'stuck',
      [silent.endpoint(['st-p0']), b.endpoint(['st-p1'])],
      priority([
        ['st-p0', roundRobin],
        ['st-p1', roundRobin],
      ]),
    );
    const started = Date.now();
    const c = client('stuck', { [PRIORITY_FAILOVER_TIMEOUT_OPTION]: 600 });
    // Meanwhile RPCs wait for st-p0, whose connection never completes.
    await assert.rejects(sendRpc(c, { deadlineMs: 150 }), { code: status.DEADLINE_EXCEEDED });
    assert.equal(await sendRpc(c, { deadlineMs: 3000 }), 'b');
    assert.ok(Date.now() - started >= 600, 'after the failover timeout, not before');
    await silent.stop();
  });

  it('fails RPCs with UNAVAILABLE and its message for an empty priority list', async () => {
    resolver.set('empty', [a.endpoint(['x'])], priority([]));
    await assert.rejects(sendRpc(client('empty')), (e: ServiceError) => {
      assert.equal(e.code, status.UNAVAILABLE);
      assert.match(e.details, /priority policy has an empty priority list/);
      return true;
    });
  });

  it('fails RPCs with the last priority’s error when every priority fails', async () => {
    await a.stop();
    await b.stop();
    resolver.set(
      'all-down',
      [a.endpoint(['ad-p0']), b.endpoint(['ad-p1'])],
      priority([
        ['ad-p0', roundRobin],
        ['ad-p1', roundRobin],
      ]),
    );
    await assert.rejects(sendRpc(client('all-down')), (e: ServiceError) => {
      assert.equal(e.code, status.UNAVAILABLE);
      assert.ok(e.details.includes(`127.0.0.1:${b.port}`), e.details);
      return true;
    });
  });
});
