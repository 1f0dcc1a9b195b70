// End to end: how one cluster spreads RPCs over its endpoints and localities (gRFC A27, A52):
// round robin over the endpoints, and locality weights through wrr_locality, the policy a
// legacy ROUND_ROBIN cluster gets (weighted_target only from two localities on).
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { edsCluster, endpoints } from '../../../lib/testing';
import {
  assertShare,
  sendRpcs,
  show,
  startXdsEnv,
  waitForDistribution,
  type XdsEnv,
} from '../helpers/xds-env';

describe('e2e: load balancing within a cluster', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b', 'c', 'd']);
  });
  afterEach(() => env.close());

  it('round robin spreads RPCs evenly over the three endpoints of a cluster', async () => {
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a', 'b', 'c') }])],
    });
    const client = env.client();
    // Until every backend is connected, round robin only has the READY ones.
    await waitForDistribution(client, 'all three backends answer', (c) => c.size === 3);
    const counts = await sendRpcs(client, 300);
    assert.equal(counts.size, 3, show(counts));
    for (const name of ['a', 'b', 'c']) assertShare(counts, name, 1 / 3, 0.05);
  });

  it('locality weights 3:1 split RPCs 75/25 between two localities', async () => {
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [
        endpoints('echo', [
          { locality: { zone: 'heavy' }, weight: 3, addresses: env.addresses('a', 'b') },
          { locality: { zone: 'light' }, weight: 1, addresses: env.addresses('c', 'd') },
        ]),
      ],
    });
    const client = env.client();
    await waitForDistribution(client, 'all four backends answer', (c) => c.size === 4);
    const counts = await sendRpcs(client, 1000);
    const heavy = (counts.get('a') ?? 0) + (counts.get('b') ?? 0);
    const light = (counts.get('c') ?? 0) + (counts.get('d') ?? 0);
    assert.equal(heavy + light, 1000, `every RPC answered: ${show(counts)}`);
    // 1000 draws at p = 0.75: one standard deviation is 1.4 %, the tolerance over 4 of them.
    assertShare(
      new Map([
        ['heavy', heavy],
        ['light', light],
      ]),
      'heavy',
      0.75,
      0.06,
    );
    // Within a locality, round robin.
    assertShare(
      new Map([
        ['a', counts.get('a') ?? 0],
        ['b', counts.get('b') ?? 0],
      ]),
      'a',
      0.5,
      0.06,
    );
  });
});

describe('e2e: connections across updates', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b', 'c']);
  });
  afterEach(() => env.close());

  it('an endpoint added by an EDS update leaves the connections to the others in place', async () => {
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a', 'b') }])],
    });
    const client = env.client();
    await waitForDistribution(client, 'a and b answer', (c) => c.size === 2);
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a', 'b', 'c') }])],
    });
    await waitForDistribution(client, 'c answers too', (c) => c.has('c'));
    await sendRpcs(client, 30);
    // One client connection each: a new configuration must not mean new subchannels.
    assert.equal(env.backends.a!.peers.size, 1, [...env.backends.a!.peers].join(', '));
    assert.equal(env.backends.b!.peers.size, 1, [...env.backends.b!.peers].join(', '));
  });

  // A priority of one locality runs its endpoint policy without weighted_target (decision 0083):
  // a second locality brings weighted_target in, a graceful switch over the same subchannels.
  it('a second locality splits RPCs by weight and leaves the connections to the first in place', async () => {
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [
        endpoints('echo', [{ locality: { zone: 'heavy' }, addresses: env.addresses('a', 'b') }]),
      ],
    });
    const client = env.client();
    await waitForDistribution(client, 'a and b answer', (c) => c.size === 2);
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [
        endpoints('echo', [
          { locality: { zone: 'heavy' }, weight: 3, addresses: env.addresses('a', 'b') },
          { locality: { zone: 'light' }, weight: 1, addresses: env.addresses('c') },
        ]),
      ],
    });
    await waitForDistribution(client, 'c answers too', (c) => c.has('c'));
    const counts = await sendRpcs(client, 1000);
    const heavy = (counts.get('a') ?? 0) + (counts.get('b') ?? 0);
    assert.equal(heavy + (counts.get('c') ?? 0), 1000, `every RPC answered: ${show(counts)}`);
    assertShare(
      new Map([
        ['heavy', heavy],
        ['light', 1000 - heavy],
      ]),
      'heavy',
      0.75,
      0.06,
    );
    assert.equal(env.backends.a!.peers.size, 1, [...env.backends.a!.peers].join(', '));
    assert.equal(env.backends.b!.peers.size, 1, [...env.backends.b!.peers].join(', '));
  });
});
