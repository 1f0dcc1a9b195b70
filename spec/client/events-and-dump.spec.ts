// client.on(...) events and client.dump().
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, XdsClient, isXdsError, type ClusterUpdate } from '../../lib';
import { edsCluster } from '../../lib/testing';
import { expireMissing, mockClock, realClock } from '../helpers/clock';
import { TEST_BACKOFF } from '../helpers/constants';
import { CDS, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

describe('events and dump', () => {
  let env: Env;
  afterEach(() => {
    realClock();
    return env?.close();
  });

  it('emits request response ack nack connected disconnected', async () => {
    env = await startEnv({ backoff: TEST_BACKOFF });
    const seen: string[] = [];
    let nackError = '';
    let disconnectedHadResponse: boolean | undefined;
    env.client.on('request', (e) => seen.push(`request ${e.resourceNames.join(',')}`));
    env.client.on('response', (e) => seen.push(`response ${e.resourceCount}`));
    env.client.on('ack', (e) => seen.push(`ack ${e.versionInfo}`));
    env.client.on('nack', (e) => {
      seen.push('nack');
      nackError = e.error;
    });
    env.client.on('connected', () => seen.push('connected'));
    env.client.on('disconnected', (e) => {
      seen.push('disconnected');
      disconnectedHadResponse = e.hadResponse;
    });
    env.server.setResources('cluster', [edsCluster('A')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await w.next('changed');
    env.server.setResources('cluster', [{ name: 'A', type: 'STATIC' }]);
    await w.next('ambient');
    env.server.endStreams(status.UNAVAILABLE, 'bye');
    await env.server.waitForStreams(2);
    await env.server.waitForRequest((r) => r.streamId !== env.server.requests[0]!.streamId);
    const v = env.server.responses[0]!.versionInfo;
    assert.deepEqual(seen.slice(0, 7), [
      'request A',
      'connected',
      'response 1',
      `ack ${v}`,
      'request A',
      'response 1',
      'nack',
    ]);
    assert.ok(seen.includes('disconnected'));
    assert.equal(disconnectedHadResponse, true);
    assert.match(nackError, /Cluster "A"/);
  });

  it('a throwing event listener reaches neither the stream nor the process', async () => {
    env = await startEnv();
    for (const name of ['request', 'response', 'ack', 'connected'] as const) {
      env.client.on(name, () => {
        throw new Error(`listener bug in '${name}' (expected in this spec)`);
      });
    }
    env.server.setResources('cluster', [edsCluster('A')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await w.next('changed');
    env.server.setResources('cluster', [edsCluster('A', { serviceName: 'v2' })]);
    await w.next('changed');
    const last = env.server.responses.at(-1)!;
    const ack = await env.server.waitForRequest((r) => r.responseNonce === last.nonce);
    assert.equal(ack.versionInfo, last.versionInfo);
  });

  it('dump reports status version error and update time per resource', async (t) => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A'), { name: 'B', type: 'STATIC' }]);
    const wa = new RecordingWatcher<ClusterUpdate>();
    const wb = new RecordingWatcher<ClusterUpdate>();
    const wc = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', wa);
    env.client.watchCluster('B', wb);
    assert.equal(
      env.client.dump().every((d) => d.status === 'REQUESTED'),
      true,
    );
    await wa.next('changed');
    await wb.next('error');
    // C's timer runs on the mock clock: A and B came on the real one, with the long timer.
    const tick = mockClock(t);
    env.client.watchCluster('C', wc);
    await expireMissing(env.server, tick, ['C']);
    await wc.next('error');
    const [a, b, c] = env.client.dump();
    assert.equal(a!.typeUrl, CDS);
    assert.deepEqual([a!.name, a!.status, a!.cached, a!.watchers], ['A', 'ACKED', true, 1]);
    assert.equal(a!.version, env.server.responses[0]!.versionInfo);
    assert.ok(a!.updateTime instanceof Date);
    assert.deepEqual([b!.name, b!.status, b!.cached], ['B', 'NACKED', false]);
    assert.equal(b!.error?.code, status.INVALID_ARGUMENT);
    assert.equal(b!.failedVersion, env.server.responses[0]!.versionInfo);
    assert.deepEqual([c!.name, c!.status], ['C', 'DOES_NOT_EXIST']);
    assert.equal(c!.error?.code, status.NOT_FOUND);
  });

  it("caches a response's few new resources in buffers of their own size, many in shared slabs", async () => {
    // A pool slab holding one cached resource would stay alive whole (8 KiB for a few hundred
    // bytes); a large response's resources fill the slabs themselves.
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A')]);
    const one = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', one);
    await one.next('changed');
    const small = env.client.dump()[0]!.bytes!;
    assert.equal(small.buffer.byteLength, small.byteLength);
    const names = Array.from({ length: 40 }, (_, i) => `many-${i}`);
    env.server.setResources('cluster', [edsCluster('A'), ...names.map((n) => edsCluster(n))]);
    const many = names.map((name) => {
      const watcher = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster(name, watcher);
      return watcher;
    });
    for (const watcher of many) await watcher.next('changed');
    const dumped = env.client.dump().filter((d) => d.name.startsWith('many-'));
    const buffers = new Set(dumped.map((d) => d.bytes!.buffer));
    assert.ok(buffers.size < dumped.length, `${buffers.size} buffers for ${dumped.length}`);
    // One more cluster: the state-of-the-world response re-sends the 41 others, unchanged, and
    // copies only the new one, into a buffer of its own.
    env.server.setResources('cluster', [
      edsCluster('A'),
      ...names.map((n) => edsCluster(n)),
      edsCluster('late'),
    ]);
    const late = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('late', late);
    await late.next('changed');
    const added = env.client.dump().find((d) => d.name === 'late')!.bytes!;
    assert.equal(added.buffer.byteLength, added.byteLength);
  });

  it('a bad bootstrap fails at construction naming the field', () => {
    assert.throws(
      () =>
        new XdsClient({
          bootstrap: { xds_servers: [{ server_uri: 'x:1', channel_creds: [{ type: 'foo' }] }] },
        }),
      (e: unknown) =>
        isXdsError(e) &&
        e.code === status.INVALID_ARGUMENT &&
        e.message.includes('xds_servers[0].channel_creds: no supported type (got "foo")'),
    );
  });
});
