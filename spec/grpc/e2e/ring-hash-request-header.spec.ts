// End to end: gRFC A76's `requestHashHeader`, through `ring_hash_experimental`, the policy name
// and config grpc-go, grpc-java and C-core accept in a service config. A plain grpc-js channel
// (no xDS) over three real backends hashes each RPC's header value onto the ring; an RPC
// without the header takes A76's random walk. Through xDS, a Cluster names the same policy in
// a TypedStruct (A52), and a header A76 refuses NACKs the Cluster.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { register } from '../../../lib/grpc';
import { edsCluster, endpoints, type JsonObject } from '../../../lib/testing';
import { closeAll, newClient, startBackends, type Backend } from '../helpers/backends';
import { sendRpc, show, startXdsEnv, type XdsEnv } from '../helpers/xds-env';

const USER = 'x-user';

function withUser(...values: string[]): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const v of values) md.add(USER, v);
  return md;
}

/** A channel straight to the backends, ring hash by the x-user header (A76's config). */
function ringHashChannel(backends: readonly Backend[]): grpc.Client {
  const target = `ipv4:${backends.map((b) => b.address).join(',')}`;
  const serviceConfig = {
    loadBalancingConfig: [{ ring_hash_experimental: { requestHashHeader: 'X-User' } }],
  };
  return newClient(target, { 'grpc.service_config': JSON.stringify(serviceConfig) });
}

/** Where each key's RPC lands, one RPC per key, ten at a time. */
async function placement(client: grpc.Client, keys: readonly string[]): Promise<string[]> {
  const placed: string[] = [];
  for (let i = 0; i < keys.length; i += 10) {
    const batch = keys.slice(i, i + 10);
    placed.push(
      ...(await Promise.all(batch.map((k) => sendRpc(client, { metadata: withUser(k) })))),
    );
  }
  return placed;
}

const KEYS = Array.from({ length: 30 }, (_, i) => `user-${i}`);

describe('e2e: ring hash by a request header (A76 requestHashHeader)', () => {
  let backends: Backend[];
  let client: grpc.Client | undefined;
  beforeEach(async () => {
    register();
    backends = await startBackends(['a', 'b', 'c']);
  });
  afterEach(async () => {
    client?.close();
    client = undefined;
    await closeAll();
  });

  it('sends RPCs with the same header value to the same backend, and spreads different values', async () => {
    client = ringHashChannel(backends);
    const first = await placement(client, KEYS);
    const again = await placement(client, KEYS);
    assert.deepStrictEqual(again, first);
    // Three backends of a third of the ring each: 30 keys on one would be a (1/3)^29 chance.
    assert.ok(new Set(first).size >= 2, `every key on ${first[0]}`);
  });

  it('hashes several values of the header joined with a comma', async () => {
    client = ringHashChannel(backends);
    const joined = await placement(
      client,
      KEYS.map((k) => `${k},second`),
    );
    const split: string[] = [];
    for (const key of KEYS)
      split.push(await sendRpc(client, { metadata: withUser(key, 'second') }));
    assert.deepStrictEqual(split, joined);
  });

  it('sends RPCs without the header to random backends, as A76 says, not to one hash', async () => {
    client = ringHashChannel(backends);
    // A76's random walk: each such RPC takes the first READY endpoint from a random place on
    // the ring, asking at most one IDLE endpoint on its way to connect; so they spread as the
    // endpoints connect. One hash for every header-less RPC would keep them on one backend.
    const landed = new Set<string>();
    for (let i = 0; i < 300 && landed.size < 3; i++) landed.add(await sendRpc(client));
    assert.deepStrictEqual([...landed].sort(), ['a', 'b', 'c']);
  });

  it('refuses a config whose header is binary or not a header name', () => {
    for (const header of ['x-user-bin', 'x user', ':path']) {
      assert.throws(
        () =>
          grpc.experimental.parseLoadBalancingConfig({
            ring_hash_experimental: { requestHashHeader: header },
          }),
        /requestHashHeader "[^"]*" is (a binary header|not a valid header name)/,
        header,
      );
    }
  });
});

/** A Cluster whose policy is ring_hash_experimental, given in a TypedStruct (A52). */
function typedStructRingHash(name: string, value: JsonObject): JsonObject {
  const typedConfig = {
    '@type': 'type.googleapis.com/xds.type.v3.TypedStruct',
    type_url: 'type.googleapis.com/ring_hash_experimental',
    value,
  };
  return {
    ...edsCluster(name),
    load_balancing_policy: {
      policies: [{ typed_extension_config: { name: 'ring', typed_config: typedConfig } }],
    },
  };
}

describe('e2e: ring hash by a request header, named by a Cluster', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b', 'c']);
  });
  afterEach(() => env.close());

  it('hashes the header with no hash policy on the route', async () => {
    env.serve({
      clusters: [typedStructRingHash('echo', { requestHashHeader: USER })],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a', 'b', 'c') }])],
    });
    const client = env.client();
    const first = await placement(client, KEYS);
    assert.deepStrictEqual(await placement(client, KEYS), first);
    assert.ok(new Set(first).size >= 2, `every key on ${first[0]}`);
  });

  it('NACKs a Cluster whose request hash header is binary, and keeps the one in use', async () => {
    env.serve({
      clusters: [typedStructRingHash('echo', { requestHashHeader: USER })],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a', 'b', 'c') }])],
    });
    const client = env.client();
    const first = await placement(client, KEYS.slice(0, 10));
    const mark = env.server.requests.length;
    env.server.setResources('cluster', [
      typedStructRingHash('echo', { requestHashHeader: 'x-id-bin' }),
    ]);
    const nack = await env.server.waitForRequest(
      (r) => r.typeUrl.endsWith('.Cluster') && r.errorDetail !== undefined,
      { after: mark },
    );
    assert.match(
      nack.errorDetail!.message,
      /load_balancing_policy\.policies\[0\].*ring_hash_experimental.*"x-id-bin" is a binary header/,
    );
    assert.deepStrictEqual(
      show(count(await placement(client, KEYS.slice(0, 10)))),
      show(count(first)),
    );
  });
});

function count(names: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return counts;
}
