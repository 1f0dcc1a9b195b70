// Resource TTLs and heartbeats (the protocol document's "TTL"), on SotW and delta alike, on
// node:test's mock clock.
//
// 1. The node advertises xds.config.supports-resource-ttl and xds.config.resource-in-sotw.
// 2. A resource sent with a TTL expires when nothing refreshes it in time: its watchers hear
//    NOT_FOUND and the cache lets it go, as if the server had removed it.
// 3. A heartbeat (a Resource with name, version and TTL, no body) refreshes the TTL and
//    notifies nobody; a body-less Resource of another version is no heartbeat: NACKed.
// 4. An update without a TTL removes it.
// 5. SotW accepts the Resource wrapper without a TTL.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, type ClusterUpdate } from '../../lib';
import { edsCluster } from '../../lib/testing';
import { mockClock, realClock } from '../helpers/clock';
import { API_TYPES, CDS, settled, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

const TTL_MS = 10_000;
const RESOURCE_WRAPPER = 'type.googleapis.com/envoy.service.discovery.v3.Resource';

for (const apiType of API_TYPES) {
  describe(`resource TTLs and heartbeats (${apiType})`, () => {
    let env: Env | undefined;
    afterEach(async () => {
      realClock();
      await env?.close();
      env = undefined;
    });

    /** A client watching cluster A, which the server sends with a TTL. */
    async function watchTtlCluster(t: Parameters<typeof mockClock>[0]) {
      env = await startEnv({ apiType });
      const tick = mockClock(t);
      env.server.setResource('cluster', edsCluster('A'), { ttlMs: TTL_MS });
      const w = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('A', w);
      await w.next('changed');
      await settled(env.server);
      return { tick, w, server: env.server };
    }

    it('ttl node advertises resource ttl and resource in sotw', async () => {
      env = await startEnv({ apiType });
      env.client.watchCluster('A', new RecordingWatcher<ClusterUpdate>());
      const first =
        apiType === 'AGGREGATED_GRPC'
          ? await env.server.waitForRequest(() => true)
          : await env.server.waitForDeltaRequest(() => true);
      const features = first.node?.clientFeatures ?? [];
      assert.ok(features.includes('xds.config.supports-resource-ttl'));
      assert.ok(features.includes('xds.config.resource-in-sotw'));
    });

    it('ttl resource expires when not refreshed', async (t) => {
      const { tick, w } = await watchTtlCluster(t);
      tick(TTL_MS - 1);
      w.expectNothingYet();
      tick(1);
      const { error } = await w.next('error');
      assert.equal(error.code, status.NOT_FOUND);
      assert.match(error.message, /Cluster "A" does not exist: its TTL ran out/);
      const [dump] = env!.client.dump();
      assert.equal(dump!.status, 'DOES_NOT_EXIST');
      assert.equal(dump!.cached, false);
    });

    it('ttl heartbeat refreshes the ttl and notifies nobody', async (t) => {
      const { tick, w, server } = await watchTtlCluster(t);
      tick(TTL_MS - 2_000);
      server.sendHeartbeats('cluster');
      await settled(server);
      const beat = server.responses.at(-1)!;
      assert.deepEqual(beat.heartbeats, ['A']);
      const ack = [...server.requests, ...server.deltaRequests].find(
        (r) => r.responseNonce === beat.nonce,
      );
      assert.equal(ack?.errorDetail, undefined, 'a heartbeat is ACKed');
      tick(TTL_MS - 1);
      w.expectNothingYet(); // past the first TTL, still there, and nobody was told anything
      assert.equal(env!.client.dump()[0]!.cached, true);
      tick(1);
      assert.equal((await w.next('error')).error.code, status.NOT_FOUND);
    });

    it('ttl update without a ttl removes it', async (t) => {
      const { tick, w, server } = await watchTtlCluster(t);
      server.setResource('cluster', edsCluster('A', { serviceName: 'no-ttl' }));
      await w.next('changed');
      await settled(server);
      tick(TTL_MS * 2);
      w.expectNothingYet();
      assert.equal(env!.client.dump()[0]!.status, 'ACKED');
    });
  });
}

describe('resource TTLs: what only one transport can show', () => {
  let env: Env | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  it('ttl body less resource of another version is nacked not a heartbeat', async () => {
    env = await startEnv({ apiType: 'AGGREGATED_DELTA_GRPC' });
    env.server.setResource('cluster', edsCluster('A'), { ttlMs: TTL_MS });
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await w.next('changed');
    await settled(env.server);
    const [nonce] = env.server.sendRawDelta({
      typeUrl: CDS,
      resources: [{ name: 'A', version: 'other', ttlMs: TTL_MS }],
    });
    const nack = await env.server.waitForDeltaRequest((r) => r.responseNonce === nonce);
    assert.match(
      nack.errorDetail!.message,
      /Cluster "A": resource: field not present, and not a heartbeat: version "other", but the cached version is "1"/,
    );
    w.expectNothingYet();
  });

  it('sotw accepts the resource wrapper without a ttl', async () => {
    env = await startEnv();
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await env.server.waitForRequest(() => true);
    const [nonce] = env.server.sendRaw({
      typeUrl: CDS,
      versionInfo: '7',
      resources: [
        {
          typeUrl: RESOURCE_WRAPPER,
          json: { name: 'A', version: 'w1', resource: { '@type': CDS, ...edsCluster('A') } },
        },
      ],
    });
    assert.equal((await w.next('changed')).resource.name, 'A');
    const ack = await env.server.waitForRequest((r) => r.responseNonce === nonce);
    assert.equal(ack.errorDetail, undefined);
    assert.equal(ack.versionInfo, '7');
  });
});
