// End to end: ring hash (gRFC A42, A76) through a real grpc-js channel on xds:///echo.test,
// our ManagementServer and real backends. A route's hash policy (a header, or the channel's id)
// gives each RPC a hash; a RING_HASH cluster sends it to the endpoint at that place on its ring.
// Keys are mapped to backends by sending one RPC per key; every wait is bounded.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
// Internal on purpose: a short failover timer (an option of ours, not public) keeps the spec fast.
import { PRIORITY_FAILOVER_TIMEOUT_OPTION } from '../../../lib/grpc/lb/priority/priority';
import { RING_SIZE_CAP_OPTION } from '../../../lib/grpc';
import { edsCluster, type JsonObject } from '../../../lib/testing';
import {
  sendRpc,
  sendRpcs,
  show,
  startXdsEnv,
  waitForDistribution,
  type XdsEnv,
} from '../helpers/xds-env';

const USER = 'x-user';

/** A legacy RING_HASH cluster (A42), ring sizes as given. */
function ringHashCluster(name: string, sizes: { min?: number; max?: number } = {}): JsonObject {
  const config: JsonObject = { hash_function: 'XX_HASH' };
  if (sizes.min !== undefined) config['minimum_ring_size'] = sizes.min;
  if (sizes.max !== undefined) config['maximum_ring_size'] = sizes.max;
  return { ...edsCluster(name), lb_policy: 'RING_HASH', ring_hash_lb_config: config };
}

/** The same through `load_balancing_policy` (A52's RingHash extension). */
function typedRingHashCluster(name: string): JsonObject {
  const { lb_policy: _legacy, ...cluster } = edsCluster(name);
  const ringHash = {
    '@type': 'type.googleapis.com/envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash',
    hash_function: 'XX_HASH',
  };
  return {
    ...cluster,
    load_balancing_policy: {
      policies: [{ typed_extension_config: { name: 'ring', typed_config: ringHash } }],
    },
  };
}

/** A route for every RPC to `cluster`, hashing by these hash_policy entries. */
function hashedRoute(cluster: string, hashPolicy: readonly JsonObject[]): JsonObject {
  return { match: { prefix: '' }, route: { cluster, hash_policy: [...hashPolicy] } };
}

const BY_USER: JsonObject = { header: { header_name: USER } };
const BY_CHANNEL: JsonObject = { filter_state: { key: 'io.grpc.channel_id' } };

interface EndpointInput {
  readonly address: string;
  readonly hashKey?: string;
  readonly weight?: number;
}

/** A ClusterLoadAssignment: one locality per entry, endpoints with A76 hash keys if given. */
function assignment(
  cluster: string,
  localities: readonly {
    readonly weight?: number;
    readonly priority?: number;
    readonly endpoints: readonly EndpointInput[];
  }[],
): JsonObject {
  return {
    cluster_name: cluster,
    endpoints: localities.map((l, i) => ({
      locality: { region: 'r', zone: `z${i}`, sub_zone: '' },
      load_balancing_weight: l.weight ?? 1,
      priority: l.priority ?? 0,
      lb_endpoints: l.endpoints.map((e) => {
        const [host, port] = e.address.split(':');
        const entry: Record<string, unknown> = {
          endpoint: { address: { socket_address: { address: host, port_value: Number(port) } } },
        };
        if (e.weight !== undefined) entry['load_balancing_weight'] = e.weight;
        if (e.hashKey !== undefined) {
          entry['metadata'] = { filter_metadata: { 'envoy.lb': { hash_key: e.hashKey } } };
        }
        return entry;
      }),
    })),
  };
}

function userMetadata(user: string): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set(USER, user);
  return md;
}

const keys = (n: number, prefix = 'user') => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** Where each key's RPC lands: one RPC per key, ten at a time. */
async function placement(
  client: grpc.Client,
  users: readonly string[],
): Promise<Map<string, string>> {
  const result = new Map<string, string>();
  for (let i = 0; i < users.length; i += 10) {
    const batch = users.slice(i, i + 10);
    const names = await Promise.all(
      batch.map((u) => sendRpc(client, { metadata: userMetadata(u) })),
    );
    batch.forEach((u, j) => result.set(u, names[j]!));
  }
  return result;
}

/** How many keys each backend holds. */
function tally(placed: ReadonlyMap<string, string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of placed.values()) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}

/** Sends RPCs for `user` until one lands somewhere `ok` accepts (bounded: 5 s). */
async function waitForKeyOn(
  client: grpc.Client,
  user: string,
  ok: (backend: string) => boolean,
  what: string,
): Promise<void> {
  const deadline = Date.now() + 5000;
  let last = '';
  while (Date.now() < deadline) {
    last = await sendRpc(client, { metadata: userMetadata(user) }).catch((e: Error) => e.message);
    if (ok(last)) return;
  }
  assert.fail(`${what}: ${user} still answered by ${last} after 5 s`);
}

describe('e2e: ring hash', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b', 'c', 'd']);
  });
  afterEach(() => env.close());

  function serve(cluster: JsonObject, hashPolicy: readonly JsonObject[], endpoints: JsonObject) {
    env.serve({
      clusters: [cluster],
      routes: [hashedRoute('echo', hashPolicy)],
      endpoints: [endpoints],
    });
  }

  const four = () =>
    assignment('echo', [
      { endpoints: env.addresses('a', 'b', 'c', 'd').map((address) => ({ address })) },
    ]);

  it('the same x-user header reaches the same backend for 50 RPCs', async () => {
    serve(ringHashCluster('echo'), [BY_USER], four());
    const client = env.client();
    for (const user of ['alice', 'bob', 'carol']) {
      const counts = await sendRpcs(client, 50, { metadata: userMetadata(user) });
      assert.equal(counts.size, 1, `${user}: ${show(counts)}`);
      assert.ok(!show(counts).includes('failed'), `${user}: ${show(counts)}`);
    }
  });

  it('a RingHash policy in load_balancing_policy (A52) hashes the same way', async () => {
    serve(typedRingHashCluster('echo'), [BY_USER], four());
    const client = env.client();
    const counts = await sendRpcs(client, 50, { metadata: userMetadata('alice') });
    assert.equal(counts.size, 1, show(counts));
  });

  it('different x-user headers spread over every backend', async () => {
    serve(ringHashCluster('echo'), [BY_USER], four());
    const client = env.client();
    const counts = tally(await placement(client, keys(200)));
    assert.equal(counts.size, 4, show(counts));
    // 200 keys on four equal endpoints: about 50 each (ring and sampling noise well inside).
    for (const [name, n] of counts) assert.ok(n >= 20 && n <= 90, `${name}: ${show(counts)}`);
  });

  it('an endpoint’s share of the ring is its locality’s share times its share of the locality (A113)', async () => {
    serve(
      ringHashCluster('echo'),
      [BY_USER],
      assignment('echo', [
        { weight: 3, endpoints: [{ address: env.addresses('a')[0]! }] },
        // b: 1/4 of the priority × 2/3 of its locality = 1/6; c: 1/4 × 1/3 = 1/12; a: 3/4.
        {
          weight: 1,
          endpoints: [
            { address: env.addresses('b')[0]!, weight: 2 },
            { address: env.addresses('c')[0]! },
          ],
        },
      ]),
    );
    const client = env.client();
    const counts = tally(await placement(client, keys(600)));
    const share = (name: string) => (counts.get(name) ?? 0) / 600;
    // A42's raw products (3, 2, 1) would give 1/2, 1/3, 1/6.
    assert.ok(Math.abs(share('a') - 3 / 4) < 0.1, show(counts));
    assert.ok(Math.abs(share('b') - 1 / 6) < 0.08, show(counts));
    assert.ok(Math.abs(share('c') - 1 / 12) < 0.06, show(counts));
  });

  it('when an endpoint leaves, its keys move and most other keys stay', async () => {
    serve(ringHashCluster('echo'), [BY_USER], four());
    const client = env.client();
    const users = keys(200);
    const before = await placement(client, users);
    const onD = users.filter((u) => before.get(u) === 'd');
    assert.ok(onD.length > 0, `some keys on d: ${show(tally(before))}`);
    serve(
      ringHashCluster('echo'),
      [BY_USER],
      assignment('echo', [
        { endpoints: env.addresses('a', 'b', 'c').map((address) => ({ address })) },
      ]),
    );
    await waitForKeyOn(client, onD[0]!, (b) => b !== 'd' && !b.includes(' '), 'd removed');
    const after = await placement(client, users);
    for (const u of onD) assert.notEqual(after.get(u), 'd', `${u} left d`);
    const others = users.filter((u) => before.get(u) !== 'd');
    const stayed = others.filter((u) => after.get(u) === before.get(u)).length;
    // The three endpoints left each get a third of a slightly larger ring, so a few keys also
    // change hands among them (about one in six): nothing like a rehash of all keys.
    assert.ok(
      stayed / others.length >= 0.7,
      `${stayed} of ${others.length} keys stayed; before ${show(tally(before))}, after ${show(tally(after))}`,
    );
  });

  it('when an endpoint fails, only its keys go on to the next endpoints of the ring', async () => {
    serve(ringHashCluster('echo'), [BY_USER], four());
    const client = env.client();
    const users = keys(120);
    const before = await placement(client, users);
    const onB = users.filter((u) => before.get(u) === 'b');
    assert.ok(onB.length > 0, show(tally(before)));
    await env.backends['b']!.stop();
    await waitForKeyOn(client, onB[0]!, (name) => ['a', 'c', 'd'].includes(name), 'b stopped');
    const after = await placement(client, users);
    for (const u of users) {
      if (before.get(u) === 'b') assert.notEqual(after.get(u), 'b', u);
      else assert.equal(after.get(u), before.get(u), `${u} stays on ${before.get(u)}`);
    }
  });

  it('two endpoints that fail to connect make the ring TRANSIENT_FAILURE: the priority fails over at once', async () => {
    await env.backends['c']!.stop();
    await env.backends['d']!.stop();
    const [a, c, d] = env.addresses('a', 'c', 'd') as [string, string, string];
    serve(
      ringHashCluster('echo'),
      [BY_USER],
      assignment('echo', [
        { priority: 0, endpoints: [{ address: c }, { address: d }] },
        { priority: 1, endpoints: [{ address: a }] },
      ]),
    );
    // A56's failover timer is far away: only the ring's own state can move RPCs on. One
    // refused endpoint is CONNECTING (A42 rule 4) and the ring tries the other by itself (A61);
    // two refused are TRANSIENT_FAILURE (rule 2).
    const client = env.client({ [PRIORITY_FAILOVER_TIMEOUT_OPTION]: 60_000 });
    const counts = await sendRpcs(client, 20, { metadata: userMetadata('alice') });
    assert.deepEqual(show(counts), show(new Map([['a', 20]])));
  });

  it('channel_id hashing keeps a channel on one backend, and channels spread', async () => {
    serve(ringHashCluster('echo'), [BY_CHANNEL], four());
    const chosen = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const client = env.client();
      const counts = await sendRpcs(client, 50);
      assert.equal(counts.size, 1, `channel ${i}: ${show(counts)}`);
      chosen.add([...counts.keys()][0]!);
    }
    // Eight random channel ids over four equal endpoints: all on one backend has p ≈ 6e-5.
    assert.ok(chosen.size >= 2, `every channel on ${[...chosen]}`);
  });

  it('A76: an endpoint’s hash_key places it on the ring, so its keys follow the key, not the address', async () => {
    const [a, b, c, d] = env.addresses('a', 'b', 'c', 'd') as [string, string, string, string];
    serve(
      ringHashCluster('echo'),
      [BY_USER],
      assignment('echo', [
        {
          endpoints: [
            { address: a, hashKey: 'pod-0' },
            { address: b, hashKey: 'pod-1' },
            { address: c, hashKey: 'pod-2' },
          ],
        },
      ]),
    );
    const client = env.client();
    const users = keys(120);
    const before = await placement(client, users);
    const onB = users.filter((u) => before.get(u) === 'b');
    assert.ok(onB.length > 0, show(tally(before)));
    // pod-1 comes back at another address (d): same keys, same ring.
    serve(
      ringHashCluster('echo'),
      [BY_USER],
      assignment('echo', [
        {
          endpoints: [
            { address: a, hashKey: 'pod-0' },
            { address: d, hashKey: 'pod-1' },
            { address: c, hashKey: 'pod-2' },
          ],
        },
      ]),
    );
    await waitForKeyOn(client, onB[0]!, (name) => name === 'd', 'pod-1 moved to d');
    const after = await placement(client, users);
    for (const u of users) {
      const expected = before.get(u) === 'b' ? 'd' : before.get(u);
      assert.equal(after.get(u), expected, u);
    }
  });

  it('a ring of one entry sends every key to one backend; the channel cap bounds the ring too', async () => {
    // max_ring_size 1: one entry on the ring, so one endpoint takes every key.
    serve(ringHashCluster('echo', { min: 1, max: 1 }), [BY_USER], four());
    const tiny = tally(await placement(env.client(), keys(40)));
    assert.equal(tiny.size, 1, show(tiny));
    // Sizes that would spread keys, capped to 1 entry by the channel option.
    serve(ringHashCluster('echo', { min: 1024, max: 4096 }), [BY_USER], four());
    const capped = env.client({ [RING_SIZE_CAP_OPTION]: 1 });
    assert.equal(tally(await placement(capped, keys(40))).size, 1);
    // The same cluster without the cap spreads them.
    const spread = tally(await placement(env.client(), keys(40)));
    assert.ok(spread.size >= 3, show(spread));
  });

  it('a route without hash policies sends each RPC to a random connected backend', async () => {
    env.serve({
      clusters: [ringHashCluster('echo')],
      routes: [{ match: { prefix: '' }, route: { cluster: 'echo' } }],
      endpoints: [four()],
    });
    const client = env.client();
    // A76's random walk: picks go to READY endpoints, and connect at most one more at a time.
    await waitForDistribution(client, 'RPCs reach more than one backend', (c) => c.size >= 2, {
      timeoutMs: 5000,
    });
  });
});
