// End to end over the per-type services: the grpc plugin routes real RPCs with a bootstrap
// whose server entry says GRPC (one stream per resource type, no ADS), and follows a route
// change and an endpoint move through those streams alone.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { edsCluster, endpoints } from '../../../lib/testing';
import { everything, routes, startXdsEnv, waitForAllOn, type XdsEnv } from '../helpers/xds-env';

describe('e2e: per-type streams (api_type GRPC)', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b'], {}, { apiType: 'GRPC' });
  });
  afterEach(() => env.close());

  it('routes RPCs and follows route and endpoint changes over four per-type streams', async () => {
    env.serve({
      clusters: [edsCluster('A'), edsCluster('B')],
      endpoints: [
        endpoints('A', [{ addresses: env.addresses('a') }]),
        endpoints('B', [{ addresses: env.addresses('b') }]),
      ],
    });
    const client = env.client();
    await waitForAllOn(client, 'a');
    env.server.setResource('route', routes([everything('B')]));
    await waitForAllOn(client, 'b');
    env.server.setResource('endpoint', endpoints('B', [{ addresses: env.addresses('a') }]));
    await waitForAllOn(client, 'a');
    // Every stream carried one type: four streams, none of them ADS.
    const types = new Map<number, Set<string>>();
    for (const r of env.server.requests) {
      types.set(r.streamId, (types.get(r.streamId) ?? new Set()).add(r.typeUrl));
    }
    assert.equal(types.size, 4);
    assert.ok([...types.values()].every((set) => set.size === 1));
  });
});
