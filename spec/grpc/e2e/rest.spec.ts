// End to end over REST-JSON polling: the grpc plugin routes real RPCs with a bootstrap whose
// server entry says REST (every type polled over HTTP, no stream), and follows a route change
// and an endpoint move that later polls bring.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { edsCluster, endpoints } from '../../../lib/testing';
import { everything, routes, startXdsEnv, waitForAllOn, type XdsEnv } from '../helpers/xds-env';

describe('e2e: REST-JSON polling (api_type REST)', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b'], {}, { apiType: 'REST', refreshDelay: '0.05s' });
  });
  afterEach(() => env.close());

  it('routes RPCs and follows route and endpoint changes brought by polls', async () => {
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
    // Every request came over REST (stream 0), for the four types.
    assert.ok(env.server.requests.length > 0);
    assert.ok(env.server.requests.every((r) => r.streamId === 0));
    assert.equal(new Set(env.server.requests.map((r) => r.typeUrl)).size, 4);
  });
});
