// End to end over incremental ADS: the grpc plugin routes real RPCs with a bootstrap whose
// server entry says AGGREGATED_DELTA_GRPC, and follows every change the server makes (a route,
// endpoints, a cluster's removal) through DeltaAggregatedResources alone.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { aggregateCluster, edsCluster, endpoints } from '../../../lib/testing';
import {
  everything,
  routes,
  startXdsEnv,
  waitForAllOn,
  waitForDistribution,
  type XdsEnv,
} from '../helpers/xds-env';

describe('e2e: delta ADS', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b'], {}, { apiType: 'AGGREGATED_DELTA_GRPC' });
  });
  afterEach(() => env.close());

  it('routes RPCs and follows route, endpoint and cluster changes over delta only', async () => {
    env.serve({
      clusters: [edsCluster('A'), edsCluster('B')],
      endpoints: [
        endpoints('A', [{ addresses: env.addresses('a') }]),
        endpoints('B', [{ addresses: env.addresses('b') }]),
      ],
    });
    const client = env.client();
    await waitForAllOn(client, 'a');
    // A route change: the RouteConfiguration, and cluster B and its endpoints (newly watched)
    // go on the wire; nothing the client already holds is sent again.
    const before = env.server.responses.length;
    env.server.setResource('route', routes([everything('B')]));
    await waitForAllOn(client, 'b');
    const sent = env.server.responses.slice(before).flatMap((r) => r.resourceNames);
    assert.deepEqual(sent.sort(), ['B', 'B', 'echo-routes']);
    // Endpoints moving, then the cluster B removed (and the route back on A).
    env.server.setResource('endpoint', endpoints('B', [{ addresses: env.addresses('a') }]));
    await waitForAllOn(client, 'a');
    env.server.setResource('route', routes([everything('A')]));
    env.server.removeResource('cluster', 'B');
    await waitForAllOn(client, 'a');
    assert.equal(env.server.requests.length, 0, 'no SotW stream was opened');
    assert.ok(env.server.deltaRequests.length > 0);
  });

  it('fails over between the leaves of an aggregate cluster', async () => {
    env.serve({
      clusters: [aggregateCluster('agg', ['A', 'B']), edsCluster('A'), edsCluster('B')],
      endpoints: [
        endpoints('A', [{ addresses: env.addresses('a') }]),
        endpoints('B', [{ addresses: env.addresses('b') }]),
      ],
    });
    const client = env.client();
    await waitForAllOn(client, 'a');
    // Delta deletes EDS resources explicitly: A's endpoints go, and RPCs move to B.
    env.server.setResources('endpoint', [endpoints('B', [{ addresses: env.addresses('b') }])]);
    await waitForDistribution(client, 'every RPC on b', (c) => c.size === 1 && c.has('b'));
  });
});
