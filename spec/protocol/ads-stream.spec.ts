// The ADS stream: one per server, every type on it, node once, subscriptions coalesced.
//
// 1. A client watches resources of several types; the server sees one stream.
// 2. The node is on the first request of a stream only, and again on the next stream.
// 3. Watches made in one tick, or inside callbacks, go out as one request per type.
// 4. Watchers of one resource share a subscription; the last cancel removes it.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { ClusterUpdate, EndpointUpdate } from '../../lib';
// Internal on purpose: one spec wraps the real gRPC transport to see each write as it happens.
import { messageCodec } from '../../lib/codec';
import { GrpcTransport } from '../../lib/client/transport/grpc-transport';
import { edsCluster, endpoints } from '../../lib/testing';
import { TEST_BACKOFF } from '../helpers/constants';
import { CDS, EDS, settled, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';
import { until } from '../helpers/wait';

describe('ADS stream', () => {
  let env: Env;
  afterEach(() => env?.close());

  it('one stream per server all types multiplexed', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A')]);
    env.server.setResources('endpoint', [endpoints('A', [{ addresses: ['127.0.0.1:8001'] }])]);
    const cw = new RecordingWatcher<ClusterUpdate>();
    const ew = new RecordingWatcher<EndpointUpdate>();
    env.client.watchCluster('A', cw);
    env.client.watchEndpoints('A', ew);
    await cw.next('changed');
    await ew.next('changed');
    assert.equal(env.server.streamsOpened, 1);
    const streams = new Set(env.server.requests.map((r) => r.streamId));
    assert.equal(streams.size, 1);
    assert.deepEqual(new Set(env.server.requests.map((r) => r.typeUrl)), new Set([CDS, EDS]));
  });

  it('node sent only on first request of a stream', async () => {
    env = await startEnv({ backoff: TEST_BACKOFF }); // it reconnects: not after the default 1 s
    env.server.setResources('cluster', [edsCluster('A')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await w.next('changed');
    env.client.watchEndpoints('A', new RecordingWatcher());
    await env.server.waitForRequest((r) => r.typeUrl === EDS);
    const [first, ...rest] = env.server.requests;
    assert.equal(first!.node?.id, 'spec-node');
    assert.ok(first!.node?.clientFeatures.includes('envoy.lb.does_not_support_overprovisioning'));
    assert.ok(rest.length >= 2);
    for (const r of rest) assert.equal(r.node, undefined, 'node repeated on a later request');

    // A new stream sends it again, on its first request only.
    const mark = env.server.requests.length;
    env.server.endStreams(14, 'restart');
    await env.server.waitForStreams(2);
    const again = await env.server.waitForRequest(() => true, { after: mark });
    assert.equal(again.node?.id, 'spec-node');
    await env.server.waitForRequest((r) => r.typeUrl === EDS, { after: mark });
    const later = env.server.requests.slice(mark + 1);
    for (const r of later) assert.equal(r.node, undefined);
  });

  it('same tick watches coalesce into one request per type', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B'), edsCluster('C')]);
    const ws = ['A', 'B', 'C'].map(() => new RecordingWatcher<ClusterUpdate>());
    ['A', 'B', 'C'].forEach((name, i) => env.client.watchCluster(name, ws[i]!));
    for (const w of ws) await w.next('changed');
    await settled(env.server);
    const first = env.server.requests.filter((r) => r.typeUrl === CDS)[0]!;
    assert.deepEqual([...first.resourceNames].sort(), ['A', 'B', 'C']);
    // the initial request and the ACK: nothing per watch
    assert.equal(env.server.requests.filter((r) => r.typeUrl === CDS).length, 2);
  });

  it('watches started inside callbacks ride on the ack', async () => {
    // Record, for each request written, the synchronous run it was written in.
    const writes: { batch: number; typeUrl: string; nonce: string }[] = [];
    let batch = 0;
    let batchQueued = false;
    const decode = (bytes: Uint8Array) =>
      messageCodec('envoy.service.discovery.v3.DiscoveryRequest').decode(bytes);
    env = await startEnv({
      transportFactory: (server) => {
        const inner = new GrpcTransport(server);
        return {
          close: () => inner.close(),
          startAdsCall: (handlers) => {
            const call = inner.startAdsCall(handlers);
            return {
              cancel: () => call.cancel(),
              write: (bytes, onWritten) => {
                const r = decode(bytes);
                writes.push({ batch, typeUrl: r.typeUrl, nonce: r.responseNonce });
                if (!batchQueued) {
                  batchQueued = true;
                  queueMicrotask(() => {
                    batch++;
                    batchQueued = false;
                  });
                }
                call.write(bytes, onWritten);
              },
            };
          },
        };
      },
    });
    env.server.setResources('cluster', [edsCluster('A', { serviceName: 'A-eds' })]);
    env.server.setResources('endpoint', [endpoints('A-eds', [{ addresses: ['127.0.0.1:8001'] }])]);
    const ew = new RecordingWatcher<EndpointUpdate>();
    env.client.watchCluster('A', {
      onResourceChanged(cluster) {
        if (cluster.type === 'EDS')
          env.client.watchEndpoints(cluster.edsServiceName ?? cluster.name, ew);
      },
      onResourceError() {},
    });
    await ew.next('changed');
    const ack = env.server.requests.findIndex((r) => r.typeUrl === CDS && r.responseNonce !== '');
    const eds = env.server.requests.findIndex((r) => r.typeUrl === EDS);
    assert.ok(ack >= 0 && eds >= 0);
    // The EDS subscription was made inside the CDS callback and was written in the same
    // synchronous run as the CDS ACK: nothing waited a tick between them.
    assert.equal(Math.abs(eds - ack), 1);
    assert.deepEqual(env.server.requests[eds]!.resourceNames, ['A-eds']);
    const ackWrite = writes.find((w) => w.typeUrl === CDS && w.nonce !== '')!;
    const edsWrite = writes.find((w) => w.typeUrl === EDS)!;
    assert.equal(edsWrite.batch, ackWrite.batch);
  });

  it('watchers of one resource share a subscription and the last cancel removes it', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B'), edsCluster('C')]);
    const w1 = new RecordingWatcher<ClusterUpdate>();
    const w2 = new RecordingWatcher<ClusterUpdate>();
    const wb = new RecordingWatcher<ClusterUpdate>();
    const h1 = env.client.watchCluster('A', w1);
    const h2 = env.client.watchCluster('A', w2);
    env.client.watchCluster('B', wb);
    await w1.next('changed');
    await w2.next('changed');
    await wb.next('changed');
    assert.deepEqual(env.server.requests[0]!.resourceNames, ['A', 'B']);
    await settled(env.server);

    const mark = env.server.requests.length;
    h1.cancel();
    // A later subscription change: the first request after the cancel is the one it makes.
    await null;
    const wc = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('C', wc);
    await wc.next('changed');
    await w2.expectNothingUntil(settled(env.server));
    const cds = () => env.server.requests.slice(mark).filter((q) => q.typeUrl === CDS);
    assert.deepEqual(
      cds()[0]!.resourceNames,
      ['A', 'B', 'C'],
      'one cancel of two must not unsubscribe',
    );
    const mark2 = env.server.requests.length;
    h2.cancel();
    h2.cancel(); // idempotent
    const r = await env.server.waitForRequest((q) => q.typeUrl === CDS, { after: mark2 });
    assert.deepEqual(r.resourceNames, ['B', 'C']);
    // and a cancelled watcher hears nothing more
    env.server.setResources('cluster', [
      edsCluster('A', { serviceName: 'x' }),
      edsCluster('B'),
      edsCluster('C'),
    ]);
    await w1.expectNothingUntil(settled(env.server));
    w2.expectNothingYet();
  });

  it('a watch handle cancels when its cancel is called off the handle', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    const wb = new RecordingWatcher<ClusterUpdate>();
    // As an effect cleanup or an abort listener takes it: the function alone.
    const { cancel } = env.client.watchCluster('A', w);
    env.client.watchCluster('B', wb);
    await w.next('changed');
    await wb.next('changed');
    await settled(env.server);
    const mark = env.server.requests.length;
    cancel();
    const r = await env.server.waitForRequest((q) => q.typeUrl === CDS, { after: mark });
    assert.deepEqual(r.resourceNames, ['B']);
  });

  it('cancel and rewatch in the same tick keeps the cached resource', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A')]);
    const first = new RecordingWatcher<ClusterUpdate>();
    const handle = env.client.watchCluster('A', first);
    await first.next('changed');
    await settled(env.server);
    const mark = env.server.requests.length;
    handle.cancel();
    const second = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', second);
    // The server is never asked again, so this must come from the cache.
    assert.equal((await second.next('changed')).resource.name, 'A');
    // A re-send of the same cluster, and its ACK: any request the cancel and re-watch made
    // would be before that ACK on the stream.
    env.server.setResources('cluster', [edsCluster('A')]);
    const push = env.server.responses.at(-1)!;
    await second.expectNothingUntil(settled(env.server));
    assert.deepEqual(
      env.server.requests.slice(mark).map((r) => r.responseNonce),
      [push.nonce],
      'the subscription did not change',
    );
  });

  it('cancel then rewatch a tick later is answered by the server', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
    const first = new RecordingWatcher<ClusterUpdate>();
    const handle = env.client.watchCluster('A', first);
    env.client.watchCluster('B', new RecordingWatcher());
    await first.next('changed');
    await settled(env.server);
    handle.cancel();
    await null; // the cache entry goes, and the unsubscription with it
    const second = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', second);
    assert.equal((await second.next('changed')).resource.name, 'A');
    const names = env.server.requests.filter((r) => r.typeUrl === CDS).map((r) => r.resourceNames);
    assert.ok(
      names.some((n) => n.length === 1 && n[0] === 'B'),
      'A was unsubscribed first',
    );
  });

  it('cancelling every watch closes the stream', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    const handle = env.client.watchCluster('A', w);
    await w.next('changed');
    await settled(env.server);
    handle.cancel();
    await until('the stream to close', () => env.server.streamCount === 0);
    // and a new watch opens a new one
    const again = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', again);
    await again.next('changed');
    assert.equal(env.server.streamsOpened, 2);
  });
});
