// Does-not-exist timers (gRFC A57), on node:test's mock clock: the specs tick it, and check right
// after each tick what the timers did.
//
// 1. A resource the server never sends is reported NOT_FOUND exactly `resourceTimeoutMs` after
//    the request naming it was written; a later arrival is still delivered.
// 2. A name subscribed while the stream is already up gets a timer too.
// 3. No timer runs while the request cannot be written (server unreachable, or the connection
//    not established); once it is written, the timer runs.
// 4. Timers stop when their stream ends and restart on the next stream, for uncached
//    resources only; a timer never reports a resource that has arrived.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, XdsClient, type ClusterUpdate } from '../../lib';
import { edsCluster, ManagementServer } from '../../lib/testing';
import { ClientEvents } from '../helpers/client-events';
import { mockClock, realClock } from '../helpers/clock';
import { TEST_BACKOFF, TEST_RESOURCE_TIMEOUT_MS } from '../helpers/constants';
import { startEnv, type Env } from '../helpers/env';
import { Gate } from '../helpers/gate';
import { RecordingWatcher } from '../helpers/recording-watcher';

const naming = (name: string) => (r: { resourceNames: readonly string[] }) =>
  r.resourceNames.includes(name);

describe('does-not-exist timers', () => {
  let env: Env | undefined;
  afterEach(async () => {
    realClock();
    await env?.close();
    env = undefined;
  });

  it('fires not found for a resource never sent and a late arrival still delivers', async (t) => {
    env = await startEnv();
    const events = new ClientEvents(env.client);
    const tick = mockClock(t);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('missing', w);
    await events.request('naming "missing"', naming('missing'));
    tick(TEST_RESOURCE_TIMEOUT_MS - 1);
    w.expectNothingYet();
    tick(1);
    const { error } = await w.next('error');
    assert.equal(error.code, status.NOT_FOUND);
    assert.equal(error.resourceName, 'missing');
    assert.match(error.message, /Cluster "missing" does not exist/);
    assert.equal(env.client.dump()[0]!.status, 'DOES_NOT_EXIST');

    env.server.setResources('cluster', [edsCluster('missing')]);
    const late = await w.next('changed');
    assert.equal(late.resource.name, 'missing');
    assert.equal(env.client.dump()[0]!.status, 'ACKED');
  });

  it('a name subscribed while the stream is up gets a timer', async (t) => {
    env = await startEnv();
    const events = new ClientEvents(env.client);
    env.server.setResources('cluster', [edsCluster('A')]);
    const wa = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', wa);
    await wa.next('changed');
    const tick = mockClock(t);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('late-missing', w);
    await events.request('naming "late-missing"', naming('late-missing'));
    tick(TEST_RESOURCE_TIMEOUT_MS - 1);
    w.expectNothingYet();
    tick(1);
    const { error } = await w.next('error');
    assert.equal(error.code, status.NOT_FOUND);
    // That request named A too; A is cached and had no timer (it would have fired with X's).
    wa.expectNothingYet();
  });

  it('no timer runs while the server cannot be reached', async (t) => {
    const timeout = 200;
    const tick = mockClock(t);
    const client = new XdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }],
        node: { id: 'spec-node' },
      },
      resourceTimeoutMs: timeout,
      backoff: TEST_BACKOFF,
    });
    try {
      const w = new RecordingWatcher<ClusterUpdate>();
      client.watchCluster('A', w);
      await null; // the first stream starts at the end of this tick
      let delay: number = TEST_BACKOFF.initialMs;
      for (let attempt = 1; attempt <= 3; attempt++) {
        // The attempt is under way (its failure is I/O, still to come): a timer started with
        // its request would fire inside this tick.
        tick(timeout * 2);
        const { error } = await w.next('error');
        assert.equal(error.code, status.UNAVAILABLE, `attempt ${attempt}: ${error.message}`);
        tick(delay); // the next attempt starts inside this tick
        delay *= TEST_BACKOFF.multiplier;
      }
      assert.deepEqual(
        w.events.map((e) => e.kind === 'error' && e.error.code),
        [status.UNAVAILABLE, status.UNAVAILABLE, status.UNAVAILABLE],
      );
    } finally {
      client.close();
    }
  });

  it('no timer runs until the connection is established', async (t) => {
    // A gate in front of the server accepts TCP and holds it: grpc-js connects but never gets
    // the server's HTTP/2 settings, so the request waits, unwritten, until the gate opens.
    const server = await ManagementServer.start();
    const gate = await Gate.start(server.address);
    const timeout = 200;
    const tick = mockClock(t);
    const client = new XdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: gate.address, channel_creds: [{ type: 'insecure' }] }],
      },
      resourceTimeoutMs: timeout,
    });
    try {
      const events = new ClientEvents(client);
      const w = new RecordingWatcher<ClusterUpdate>();
      client.watchCluster('A', w);
      await gate.holding(); // the client's stream has started and its connection is pending
      tick(timeout * 4);
      w.expectNothingYet();
      assert.equal(events.requests.length, 0);

      gate.open();
      await events.request('naming "A"', naming('A'));
      tick(timeout - 1);
      w.expectNothingYet();
      tick(1);
      assert.equal((await w.next('error')).error.code, status.NOT_FOUND);
    } finally {
      client.close();
      await gate.close();
      await server.close();
    }
  });

  it('timers stop with their stream and restart on the next for uncached only', async (t) => {
    const timeout = 1000;
    env = await startEnv({ resourceTimeoutMs: timeout, backoff: TEST_BACKOFF });
    const events = new ClientEvents(env.client);
    env.server.setResources('cluster', [edsCluster('A')]);
    const wa = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', wa);
    await wa.next('changed');

    const tick = mockClock(t);
    env.server.holdResponses('cluster');
    const wx = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('X', wx);
    await events.request('naming "X"', naming('X'));
    tick(timeout / 2);
    // The stream ends after a response: normal, nobody hears of it, and X's timer stops.
    const mark = events.requests.length;
    env.server.endStreams(status.UNAVAILABLE, 'restart');
    await events.disconnected(1);
    tick(TEST_BACKOFF.initialMs); // the next stream starts
    await events.request('naming "X" on the next stream', naming('X'), mark);
    // Past the time the first timer would have fired.
    tick(timeout / 2);
    wx.expectNothingYet();
    // The restarted timer fires `timeout` after the new stream's request, not before.
    tick(timeout / 2 - 1);
    wx.expectNothingYet();
    tick(1);
    assert.equal((await wx.next('error')).error.code, status.NOT_FOUND);
    // A was cached: no timer for it on the new stream, even though responses are held.
    wa.expectNothingYet();
  });

  it('a timer never reports a resource that arrived on the new stream', async (t) => {
    const timeout = 800;
    env = await startEnv({ resourceTimeoutMs: timeout, backoff: TEST_BACKOFF });
    const events = new ClientEvents(env.client);
    env.server.setResources('cluster', [edsCluster('A')]);
    const wa = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', wa);
    await wa.next('changed');

    const tick = mockClock(t);
    env.server.holdResponses('cluster');
    const wx = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('X', wx);
    await events.request('naming "X"', naming('X'));
    tick(timeout / 2);
    const mark = events.requests.length;
    env.server.endStreams(status.UNAVAILABLE, 'restart');
    await events.disconnected(1);
    tick(TEST_BACKOFF.initialMs);
    await events.request('naming "X" on the next stream', naming('X'), mark);
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('X')]);
    env.server.releaseResponses('cluster');
    await wx.next('changed');
    // Past every timer either stream could have started.
    tick(timeout * 2);
    assert.deepEqual(
      wx.events.map((e) => e.kind),
      ['changed'],
    );
  });
});
