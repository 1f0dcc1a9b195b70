// `xds_client.cluster_manager` (gRFC A28, A31) against hand-driven fake children: an RPC goes
// to the child its ConfigSelector named, exitIdle (which grpc-js calls on every RPC) reaches
// only children with something to do, and the ConfigSelector never reaches the children.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { connectivityState, experimental, Metadata } from '@grpc/grpc-js';
import {
  ClusterManagerConfig,
  ClusterManagerLoadBalancer,
} from '../../../lib/grpc/lb/cluster-manager/cluster-manager';
import { PICK_CLUSTER, PICK_FAILURE } from '../../../lib/grpc/names';
import { fakeChild, FakeConfig, registerTestPolicies, underFakeParent } from './test-policies';

const { CONNECTING, IDLE, READY, TRANSIENT_FAILURE } = connectivityState;

/** A cluster manager whose children are fakes with ids `<prefix>-<cluster>`. */
function fakeManager(prefix: string, clusters: readonly string[]) {
  const { helper, lb, update } = underFakeParent((h) => new ClusterManagerLoadBalancer(h));
  const config = new ClusterManagerConfig(
    new Map(clusters.map((c) => [c, new FakeConfig(`${prefix}-${c}`)])),
  );
  const selector = { marker: 'a config selector' };
  update(config, { [experimental.CHANNEL_ARGS_CONFIG_SELECTOR_KEY]: selector, 'test.kept': 1 });
  const child = (cluster: string) => fakeChild(`${prefix}-${cluster}`);
  const pickFor = (extraPickInfo: Record<string, string>) =>
    helper.reports.at(-1)!.picker.pick({ metadata: new Metadata(), extraPickInfo });
  return { helper, lb, child, pickFor };
}

describe('cluster_manager', () => {
  before(registerTestPolicies);

  it('calls exitIdle only on children that are not READY', () => {
    const { lb, child } = fakeManager('exit-idle', ['ready', 'idle', 'connecting', 'failed']);
    child('ready').report(READY);
    child('connecting').report(CONNECTING);
    child('failed').report(TRANSIENT_FAILURE);
    lb.exitIdle();
    lb.exitIdle();
    assert.equal(child('ready').exitIdleCalls, 0, 'a READY child has nothing to do');
    assert.equal(child('idle').exitIdleCalls, 2);
    assert.equal(child('connecting').exitIdleCalls, 2);
    assert.equal(child('failed').exitIdleCalls, 2);

    // A child that leaves READY is woken again.
    child('ready').report(IDLE);
    lb.exitIdle();
    assert.equal(child('ready').exitIdleCalls, 1);
  });

  it('keeps the ConfigSelector out of its children’s options, and every other option in', () => {
    const { child } = fakeManager('options', ['a']);
    const options = child('a').updates.at(-1)!.options;
    assert.equal(options[experimental.CHANNEL_ARGS_CONFIG_SELECTOR_KEY], undefined);
    assert.equal(options['test.kept'], 1);
  });

  it('sends an RPC to the child its ConfigSelector named, and fails one with a drop reason', () => {
    const { child, pickFor } = fakeManager('pick', ['a', 'b']);
    child('a').report(READY);
    child('b').report(READY);
    assert.equal(pickFor({ [PICK_CLUSTER]: 'b' }), child('b').pickResult);
    assert.equal(pickFor({ [PICK_CLUSTER]: 'a' }), child('a').pickResult);
    const unknown = pickFor({ [PICK_CLUSTER]: 'c' });
    assert.equal(unknown.pickResultType, experimental.PickResultType.DROP);
    assert.match(String(unknown.status?.details), /cluster "c" is not in/);
    const failed = pickFor({ [PICK_FAILURE]: 'fault injected' });
    assert.equal(failed.pickResultType, experimental.PickResultType.DROP);
    assert.equal(failed.status?.details, 'fault injected');
  });
});
