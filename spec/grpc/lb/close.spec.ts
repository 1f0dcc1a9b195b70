// A closed channel leaves nothing of priority and weighted_target behind: no timer pending
// (not even an unref'd one: it would fire into a destroyed tree), no socket, no server handle.
//
// In a file of its own, so in a process of its own: grpc-js lets a subchannel that is dropped
// during its reconnect backoff connect once more when the backoff ends, so channels of other
// specs that saw a backend down may open stray connections while this one counts handles.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { registerPriorityPolicy } from '../../../lib/grpc/lb/priority/priority';
import { registerWeightedTargetPolicy } from '../../../lib/grpc/lb/weighted-target/weighted-target';
import { POLICY } from '../../../lib/grpc/names';
import {
  closeAll,
  manualResolver,
  newClient,
  sendRpc,
  sendRpcs,
  startBackends,
  startSilentServer,
  trackTimers,
  waitForResourcesBack,
  waitUntil,
  type Backend,
} from '../helpers/backends';

registerPriorityPolicy();
registerWeightedTargetPolicy();

const LB_TIMERS = /lib[\\/]grpc[\\/]lb[\\/]/;
const roundRobin = { round_robin: {} };

function priority(children: [string, object][]): object {
  return {
    [POLICY.priority]: {
      children: Object.fromEntries(children.map(([name, config]) => [name, { config: [config] }])),
      priorities: children.map(([name]) => name),
    },
  };
}

function weightedTarget(targets: string[]): object {
  return {
    [POLICY.weightedTarget]: {
      targets: Object.fromEntries(
        targets.map((name) => [name, { weight: 1, child_policy: [roundRobin] }]),
      ),
    },
  };
}

describe('closing a channel through priority and weighted_target', () => {
  const resolver = manualResolver('xds-client-lb-test-close');
  after(() => closeAll());

  it('clears every timer and leaves no handle behind', async () => {
    const [x, y] = (await startBackends(['x', 'y'])) as [Backend, Backend];
    const silent = await startSilentServer();
    const baseline = process.getActiveResourcesInfo();
    const timers = trackTimers(LB_TIMERS);
    const clients = [];
    try {
      // A failover timer pending: cs-p0 connects forever (10 s default timeout).
      resolver.set(
        'stuck',
        [silent.endpoint(['cs-p0']), y.endpoint(['cs-p1'])],
        priority([
          ['cs-p0', roundRobin],
          ['cs-p1', roundRobin],
        ]),
      );
      const stuck = newClient(resolver.target('stuck'));
      clients.push(stuck);
      stuck.getChannel().getConnectivityState(true);

      // A priority retention timer pending (15 min): cr-p1 served, then cr-p0 took over.
      const endpoints = [x.endpoint(['cr-p0']), y.endpoint(['cr-p1'])];
      resolver.set(
        'retained',
        endpoints,
        priority([
          ['cr-p1', roundRobin],
          ['cr-p0', roundRobin],
        ]),
      );
      const retained = newClient(resolver.target('retained'));
      clients.push(retained);
      assert.equal(await sendRpc(retained), 'y');
      resolver.set(
        'retained',
        endpoints,
        priority([
          ['cr-p0', roundRobin],
          ['cr-p1', roundRobin],
        ]),
      );
      await waitUntil('RPCs on x', async () => (await sendRpcs(retained, 10)).get('x') === 10);

      // A weighted_target retention timer pending (15 min): wl-b dropped from the config.
      const localities = [x.endpoint(['wl-a']), y.endpoint(['wl-b'])];
      resolver.set('weighted', localities, weightedTarget(['wl-a', 'wl-b']));
      const weighted = newClient(resolver.target('weighted'));
      clients.push(weighted);
      await waitUntil(
        'both localities serving',
        async () => (await sendRpcs(weighted, 20)).size === 2,
      );
      resolver.set('weighted', localities, weightedTarget(['wl-a']));

      await waitUntil('three timers pending', () => timers.pending().length === 3);
      assert.ok(
        timers.pending().every((t) => !t.hasRef()),
        'none holds the process',
      );

      for (const client of clients) client.close();
      // Long before any of them could fire: only clearing them empties the list.
      assert.deepEqual(timers.pending(), []);
      // grpc-js lets a connection attempt run on after its subchannel is dropped (an unref'd
      // socket, until its 20 s connect timeout): the silent server's end of it is ours to close.
      await silent.stop();
      await waitForResourcesBack(baseline, 3000);
    } finally {
      timers.stop();
    }
  });
});
