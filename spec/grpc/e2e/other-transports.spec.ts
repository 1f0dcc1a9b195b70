// End to end over the transports other than ADS: the grpc plugin routes real RPCs with a
// bootstrap whose server entry says GRPC (one stream per resource type) or REST (every type
// polled over HTTP, no stream), and follows a route change and an endpoint move that arrive
// over that transport alone.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { RecordedRequest } from '../../../lib/testing';
import { edsCluster, endpoints, type BootstrapOptions } from '../../../lib/testing';
import { everything, routes, startXdsEnv, waitForAllOn, type XdsEnv } from '../helpers/xds-env';

const TRANSPORTS: readonly {
  readonly title: string;
  readonly bootstrap: BootstrapOptions;
  /** What the requests the server received say of the transport. */
  readonly check: (requests: readonly RecordedRequest[]) => void;
}[] = [
  {
    title: 'per-type streams (api_type GRPC)',
    bootstrap: { apiType: 'GRPC' },
    check(requests) {
      // Every stream carried one type: four streams, none of them ADS.
      const types = new Map<number, Set<string>>();
      for (const r of requests) {
        types.set(r.streamId, (types.get(r.streamId) ?? new Set()).add(r.typeUrl));
      }
      assert.equal(types.size, 4);
      assert.ok([...types.values()].every((set) => set.size === 1));
    },
  },
  {
    title: 'REST-JSON polling (api_type REST)',
    bootstrap: { apiType: 'REST', refreshDelay: '0.05s' },
    check(requests) {
      // Every request came over REST (stream 0), for the four types.
      assert.ok(requests.length > 0);
      assert.ok(requests.every((r) => r.streamId === 0));
      assert.equal(new Set(requests.map((r) => r.typeUrl)).size, 4);
    },
  },
];

for (const transport of TRANSPORTS) {
  describe(`e2e: ${transport.title}`, () => {
    let env: XdsEnv;
    beforeEach(async () => {
      env = await startXdsEnv(['a', 'b'], {}, transport.bootstrap);
    });
    afterEach(() => env.close());

    it('routes RPCs and follows route and endpoint changes over that transport alone', async () => {
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
      transport.check(env.server.requests);
    });
  });
}
