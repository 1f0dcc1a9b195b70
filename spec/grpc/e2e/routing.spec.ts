// End to end: which cluster an RPC goes to (gRFC A28, A31): weighted clusters picked per RPC,
// header matchers of every form, path matchers, and RE2 safe_regex on a header that would make
// a backtracking engine take seconds.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { edsCluster, endpoints, type JsonObject } from '../../../lib/testing';
import {
  assertShare,
  routes,
  sendRpcs,
  show,
  startXdsEnv,
  waitForAllOn,
  waitForDistribution,
  waitForFailure,
  type XdsEnv,
} from '../helpers/xds-env';

/** One EDS cluster per name, each over the backend of the same name. */
function clustersOver(env: XdsEnv, names: readonly string[]) {
  return {
    clusters: names.map((name) => edsCluster(name)),
    endpoints: names.map((name) => endpoints(name, [{ addresses: env.addresses(name) }])),
  };
}

function metadata(entries: Record<string, string>): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [key, value] of Object.entries(entries)) md.set(key, value);
  return md;
}

/** A route on headers only (every path) to `cluster`. */
function onHeaders(cluster: string, ...headers: JsonObject[]): JsonObject {
  return { match: { prefix: '', headers }, route: { cluster } };
}

describe('e2e: routing', () => {
  let env: XdsEnv;
  afterEach(() => env.close());

  describe('weighted clusters', () => {
    beforeEach(async () => {
      env = await startXdsEnv(['a', 'b']);
    });

    it('weighted_clusters 80/20 sends 80 % of RPCs to one cluster and 20 % to the other', async () => {
      env.serve({
        ...clustersOver(env, ['a', 'b']),
        routes: [
          {
            match: { prefix: '' },
            route: {
              weighted_clusters: {
                clusters: [
                  { name: 'a', weight: 80 },
                  { name: 'b', weight: 20 },
                ],
              },
            },
          },
        ],
      });
      const client = env.client();
      await waitForDistribution(client, 'both clusters answer', (c) => c.size === 2);
      const counts = await sendRpcs(client, 1000);
      assert.equal((counts.get('a') ?? 0) + (counts.get('b') ?? 0), 1000, show(counts));
      // One standard deviation of 1000 draws at p = 0.8 is 1.3 %.
      assertShare(counts, 'a', 0.8, 0.06);
    });
  });

  describe('route changes', () => {
    beforeEach(async () => {
      env = await startXdsEnv(['a', 'b']);
    });

    it("a route change moves RPCs to the new cluster and releases the old cluster's watch", async () => {
      env.serve(clustersOver(env, ['a', 'b']));
      env.server.setResources('route', [routes([to('a', { prefix: '' })])]);
      const client = env.client();
      await waitForAllOn(client, 'a');

      const mark = env.server.requests.length;
      env.server.setResources('route', [routes([to('b', { prefix: '' })])]);
      await waitForAllOn(client, 'b');
      // Once no RPC holds cluster a, the channel unsubscribes from it and from its endpoints.
      for (const type of ['.Cluster', '.ClusterLoadAssignment']) {
        await env.server.waitForRequest(
          (r) =>
            r.typeUrl.endsWith(type) &&
            r.resourceNames.includes('b') &&
            !r.resourceNames.includes('a'),
          { after: mark, timeoutMs: 3000 },
        );
      }
    });
  });

  describe('headers and paths', () => {
    const names = ['exact', 'prefix', 'present', 'regex', 'invert', 'grpc'];
    beforeEach(async () => {
      env = await startXdsEnv(names);
    });

    it('header matchers (exact, prefix, present, safe_regex, invert) send RPCs to their clusters', async () => {
      env.serve({
        ...clustersOver(env, names),
        routes: [
          onHeaders('exact', { name: 'x-exact', exact_match: 'gold' }),
          onHeaders('prefix', { name: 'x-prefix', string_match: { prefix: 'tenant-' } }),
          onHeaders('present', { name: 'x-present', present_match: true }),
          onHeaders('regex', { name: 'x-regex', safe_regex_match: { regex: '[0-9]{3}-[a-z]+' } }),
          onHeaders('invert', { name: 'x-invert', exact_match: 'no', invert_match: true }),
          // No catch-all: an RPC matching nothing above lands here only because gRPC's
          // content-type is application/grpc (gRFC A28).
          onHeaders('grpc', { name: 'content-type', exact_match: 'application/grpc' }),
        ],
      });
      const client = env.client();
      await waitForAllOn(client, 'grpc');
      const cases: [Record<string, string>, string][] = [
        [{}, 'grpc'],
        [{ 'x-exact': 'gold' }, 'exact'],
        [{ 'x-exact': 'golden' }, 'grpc'],
        [{ 'x-prefix': 'tenant-42' }, 'prefix'],
        [{ 'x-prefix': 'other-42' }, 'grpc'],
        [{ 'x-present': '' }, 'present'],
        [{ 'x-regex': '123-abc' }, 'regex'],
        [{ 'x-regex': '123-abc!' }, 'grpc'], // safe_regex matches the whole value
        [{ 'x-invert': 'yes' }, 'invert'],
        [{ 'x-invert': 'no' }, 'grpc'],
        [{ 'x-exact': 'gold', 'x-prefix': 'tenant-1' }, 'exact'], // the first match wins
      ];
      for (const [headers, expected] of cases) {
        const counts = await sendRpcs(client, 5, { metadata: metadata(headers) });
        assert.deepEqual(
          Object.fromEntries(counts),
          { [expected]: 5 },
          `headers ${JSON.stringify(headers)}: expected every RPC on ${expected}`,
        );
      }
    });

    it('a header that makes (a+)+$ backtrack exponentially is matched by RE2 and routed', async () => {
      env.serve({
        ...clustersOver(env, names),
        routes: [
          onHeaders('regex', { name: 'x-evil', safe_regex_match: { regex: '(a+)+$' } }),
          to('grpc', { prefix: '' }),
        ],
      });
      const client = env.client();
      await waitForAllOn(client, 'grpc');
      // A backtracking engine doubles its time with each 'a' (about 13 s at 30 in V8, days at
      // 40): the selector runs on the event loop, so with one this spec would never finish.
      // RE2 is linear, and the RPCs land within their 2 s deadline.
      const evil = 'a'.repeat(40) + 'b';
      const miss = await sendRpcs(client, 3, { metadata: metadata({ 'x-evil': evil }) });
      assert.deepEqual(Object.fromEntries(miss), { grpc: 3 });
      const hit = await sendRpcs(client, 3, { metadata: metadata({ 'x-evil': 'a'.repeat(40) }) });
      assert.deepEqual(Object.fromEntries(hit), { regex: 3 });
    });

    it('path matchers: prefix, exact path, case_sensitive false, safe_regex, and no match', async () => {
      // The backends serve /test.Echo/Echo; each step is a route table under which that path
      // must land on the cluster named, alternating so that every step is seen to take effect.
      const steps: [JsonObject[], string][] = [
        // An exact path that is only a prefix of the RPC's does not match; the prefix does.
        [
          [to('exact', { path: '/test.Echo/Ech' }), to('prefix', { prefix: '/test.Echo/' })],
          'prefix',
        ],
        [[to('exact', { path: '/test.Echo/Echo' }), to('prefix', { prefix: '' })], 'exact'],
        // Case-sensitive by default.
        [
          [to('present', { prefix: '/TEST.echo/' }), to('prefix', { prefix: '/test.Echo/E' })],
          'prefix',
        ],
        [
          [
            to('present', { prefix: '/TEST.echo/', case_sensitive: false }),
            to('prefix', { prefix: '' }),
          ],
          'present',
        ],
        [
          [
            to('exact', { path: '/TEST.ECHO/ECHO', case_sensitive: false }),
            to('prefix', { prefix: '' }),
          ],
          'exact',
        ],
        // safe_regex matches the whole path.
        [
          [to('regex', { safe_regex: { regex: '/test\\.Echo/E' } }), to('prefix', { prefix: '' })],
          'prefix',
        ],
        [
          [
            to('regex', { safe_regex: { regex: '/test\\.Echo/E.*o' } }),
            to('prefix', { prefix: '' }),
          ],
          'regex',
        ],
      ];
      env.serve({ ...clustersOver(env, names), routes: steps[0]![0] });
      const client = env.client();
      for (const [routeList, expected] of steps) {
        env.server.setResources('route', [routes(routeList)]);
        await waitForAllOn(client, expected, { batch: 10 });
      }
      env.server.setResources('route', [routes([to('prefix', { prefix: '/other.Service/' })])]);
      const error = await waitForFailure(
        client,
        'an RPC no route matches fails',
        (e) => e.code === grpc.status.UNAVAILABLE && /no route/.test(e.details),
      );
      assert.match(error.details, /\/test\.Echo\/Echo/);
      assert.match(error.details, /xDS node id/);
    });
  });
});

function to(cluster: string, match: JsonObject): JsonObject {
  return { match, route: { cluster } };
}
