// Does-not-exist timers (gRFC A57), with a 500 ms timeout instead of 15 s.
//
// 1. A resource the server never sends is reported NOT_FOUND once the timer fires; a later
//    arrival is still delivered.
// 2. A name subscribed while the stream is already up gets a timer too.
// 3. No timer runs while the request cannot be written (server unreachable).
// 4. Timers stop when their stream ends and restart on the next stream, for uncached
//    resources only; a timer never reports a resource that has arrived.
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { status, XdsClient, type ClusterUpdate } from '../../lib';
import { edsCluster } from '../../lib/testing';
import { TEST_BACKOFF, TEST_RESOURCE_TIMEOUT_MS } from '../helpers/constants';
import { CDS, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('does-not-exist timers', () => {
  let env: Env;
  afterEach(() => env?.close());

  it('fires-not-found-for-a-resource-never-sent-and-a-late-arrival-still-delivers', async () => {
    env = await startEnv();
    const w = new RecordingWatcher<ClusterUpdate>();
    const started = Date.now();
    env.client.watchCluster('missing', w);
    const { error } = await w.next('error');
    assert.equal(error.code, status.NOT_FOUND);
    assert.equal(error.resourceName, 'missing');
    assert.match(error.message, /Cluster "missing" does not exist/);
    assert.ok(Date.now() - started >= TEST_RESOURCE_TIMEOUT_MS - 20);
    assert.equal(env.client.dump()[0]!.status, 'DOES_NOT_EXIST');

    env.server.setResources('cluster', [edsCluster('missing')]);
    const late = await w.next('changed');
    assert.equal(late.resource.name, 'missing');
    assert.equal(env.client.dump()[0]!.status, 'ACKED');
  });

  it('a-name-subscribed-while-the-stream-is-up-gets-a-timer', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A')]);
    const wa = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', wa);
    await wa.next('changed');
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('late-missing', w);
    const { error } = await w.next('error', TEST_RESOURCE_TIMEOUT_MS * 4);
    assert.equal(error.code, status.NOT_FOUND);
    await wa.expectNothing();
  });

  it('no-timer-runs-while-the-server-cannot-be-reached', async () => {
    const client = new XdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }],
        node: { id: 'spec-node' },
      },
      resourceTimeoutMs: 200,
      backoff: TEST_BACKOFF,
    });
    try {
      const w = new RecordingWatcher<ClusterUpdate>();
      client.watchCluster('A', w);
      await sleep(200 * 4);
      assert.ok(w.events.length > 0);
      for (const e of w.events) {
        assert.equal(e.kind, 'error');
        assert.equal(e.kind === 'error' && e.error.code, status.UNAVAILABLE);
      }
    } finally {
      client.close();
    }
  });

  it('no-timer-runs-while-the-connection-is-not-established', async () => {
    // A server that accepts TCP and never speaks HTTP/2: the request is buffered, not sent.
    const silent = net.createServer((socket) => sockets.push(socket));
    const sockets: net.Socket[] = [];
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const client = new XdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: `127.0.0.1:${port}`, channel_creds: [{ type: 'insecure' }] }],
      },
      resourceTimeoutMs: 200,
    });
    try {
      const w = new RecordingWatcher<ClusterUpdate>();
      client.watchCluster('A', w);
      await w.expectNothing(200 * 4);
    } finally {
      client.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('timers-stop-with-their-stream-and-restart-on-the-next-for-uncached-only', async () => {
    const timeout = 1000;
    env = await startEnv({ resourceTimeoutMs: timeout, backoff: TEST_BACKOFF });
    env.server.setResources('cluster', [edsCluster('A')]);
    const wa = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', wa);
    await wa.next('changed');

    env.server.holdResponses('cluster');
    const wx = new RecordingWatcher<ClusterUpdate>();
    const mark = env.server.requests.length;
    env.client.watchCluster('X', wx);
    await env.server.waitForRequest((r) => r.resourceNames.includes('X'), { after: mark });
    const armed = Date.now();
    await sleep(timeout / 2);
    // The stream ends after a response: normal, nobody hears of it, and X's timer stops.
    env.server.endStreams(status.UNAVAILABLE, 'restart');
    await env.server.waitForStreams(2);
    const restarted = Date.now();
    // The first timer would have fired at armed + timeout; it must not.
    await sleep(Math.max(0, armed + timeout + 200 - Date.now()));
    assert.equal(wx.events.length, 0, 'a timer outlived its stream');
    const { error } = await wx.next('error', timeout * 3);
    assert.equal(error.code, status.NOT_FOUND);
    assert.ok(Date.now() - restarted >= timeout - 50, 'the timer restarted on the new stream');
    // A was cached: no timer for it on the new stream, even though responses are held.
    await wa.expectNothing();
  });

  it('a-timer-never-reports-a-resource-that-arrived-on-the-new-stream', async () => {
    const timeout = 800;
    env = await startEnv({ resourceTimeoutMs: timeout, backoff: TEST_BACKOFF });
    env.server.setResources('cluster', [edsCluster('A')]);
    const wa = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', wa);
    await wa.next('changed');
    env.server.holdResponses('cluster');
    const wx = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('X', wx);
    await env.server.waitForRequest((r) => r.typeUrl === CDS && r.resourceNames.includes('X'));
    await sleep(timeout / 2);
    env.server.endStreams(status.UNAVAILABLE, 'restart');
    await env.server.waitForStreams(2);
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('X')]);
    env.server.releaseResponses('cluster');
    await wx.next('changed');
    await sleep(timeout);
    assert.deepEqual(
      wx.events.map((e) => e.kind),
      ['changed'],
    );
  });
});
