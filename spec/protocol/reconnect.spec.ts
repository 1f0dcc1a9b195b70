// Stream ends and reconnects (gRFC A57), with a fast, jitter-free backoff.
//
// 1. A stream that ends after a response is normal: nobody is told, and the next stream
//    re-subscribes every type with its last ACKed version and no nonce.
// 2. A stream that fails before any response is a connectivity error: ambient for watchers
//    of cached resources, a resource error for the others; nothing cached is lost.
// 3. An unreachable server gives UNAVAILABLE naming the server.
// 4. The backoff grows while streams fail, and resets after a healthy stream. Re-watching does
//    not get around it.
// 5. After a healthy stream, the next starts once the initial delay has passed since the last
//    one started: at once after a stream that lived longer (a server rolling over), and no
//    sooner than that against a server that answers and closes at once. (4 and 5 run on
//    node:test's mock clock: each delay is checked to the millisecond.)
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, XdsClient, type ClusterUpdate, type EndpointUpdate } from '../../lib';
import { edsCluster, endpoints } from '../../lib/testing';
import { ClientEvents } from '../helpers/client-events';
import { mockClock, realClock, timedStreams } from '../helpers/clock';
import { TEST_BACKOFF } from '../helpers/constants';
import { CDS, EDS, settled, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';
import { until } from '../helpers/wait';

describe('reconnect', () => {
  let env: Env | undefined;
  afterEach(async () => {
    realClock();
    await env?.close();
    env = undefined;
  });

  it('a stream ending after a response notifies nobody and resubscribes with last acked versions', async () => {
    env = await startEnv({ backoff: TEST_BACKOFF });
    env.server.setResources('cluster', [edsCluster('A')]);
    env.server.setResources('endpoint', [endpoints('A', [{ addresses: ['127.0.0.1:8001'] }])]);
    const cw = new RecordingWatcher<ClusterUpdate>();
    const ew = new RecordingWatcher<EndpointUpdate>();
    env.client.watchCluster('A', cw);
    env.client.watchEndpoints('A', ew);
    await cw.next('changed');
    await ew.next('changed');
    const cdsVersion = env.server.responses.filter((r) => r.typeUrl === CDS).at(-1)!.versionInfo;
    const edsVersion = env.server.responses.filter((r) => r.typeUrl === EDS).at(-1)!.versionInfo;

    const mark = env.server.requests.length;
    env.server.endStreams(status.UNAVAILABLE, 'server restart');
    const cds = await env.server.waitForRequest((r) => r.typeUrl === CDS, { after: mark });
    const eds = await env.server.waitForRequest((r) => r.typeUrl === EDS, { after: mark });
    assert.equal(cds.versionInfo, cdsVersion);
    assert.equal(cds.responseNonce, '');
    assert.deepEqual(cds.resourceNames, ['A']);
    assert.equal(eds.versionInfo, edsVersion);
    assert.equal(eds.responseNonce, '');
    // The server re-sends the same resources: identical bytes, so nobody is told anything
    // (by the time the client has answered them).
    await cw.expectNothingUntil(settled(env.server));
    ew.expectNothingYet();
  });

  it('a stream failing before any response gives ambient and resource errors and keeps the cache', async () => {
    env = await startEnv({ backoff: TEST_BACKOFF });
    env.server.setResources('cluster', [edsCluster('A')]);
    const cached = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', cached);
    await cached.next('changed');

    env.server.holdResponses('cluster');
    const uncached = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('B', uncached);
    await env.server.waitForRequest((r) => r.resourceNames.includes('B'));
    env.server.setStreamFault({
      endBeforeResponseWith: { code: status.UNAVAILABLE, details: 'down' },
    });
    env.server.endStreams(status.UNAVAILABLE, 'down');
    // The first stream had a response, so its end is silent; the next one fails at once.
    const ambient = await cached.next('ambient');
    assert.equal(ambient.error.code, status.UNAVAILABLE);
    assert.match(ambient.error.message, /before any response/);
    const error = await uncached.next('error');
    assert.equal(error.error.code, status.UNAVAILABLE);
    assert.equal(env.client.dump().find((d) => d.name === 'A')!.cached, true);

    // A new watcher of the cached resource gets it, then the current connectivity error.
    const late = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', late);
    assert.equal((await late.next('changed')).resource.name, 'A');
    assert.equal((await late.next('ambient')).error.code, status.UNAVAILABLE);

    env.server.setStreamFault(undefined);
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
    env.server.releaseResponses('cluster');
    assert.equal((await uncached.next('changed', 5000)).resource.name, 'B');
  });

  it('an unreachable server gives unavailable naming the server', async () => {
    const client = new XdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }],
        node: { id: 'spec-node' },
      },
      backoff: TEST_BACKOFF,
    });
    try {
      const w = new RecordingWatcher<ClusterUpdate>();
      client.watchCluster('A', w);
      const { error } = await w.next('error');
      assert.equal(error.code, status.UNAVAILABLE);
      assert.match(error.message, /127\.0\.0\.1:1/);
      assert.match(error.message, /spec-node/);
    } finally {
      client.close();
    }
  });

  it('backoff grows while streams fail and resets after a healthy stream', async (t) => {
    const { transportFactory, starts } = timedStreams();
    const backoff = { initialMs: 100, multiplier: 3, maxMs: 10_000, jitter: 0 };
    env = await startEnv({ backoff, transportFactory });
    const events = new ClientEvents(env.client);
    env.server.setStreamFault({
      endBeforeResponseWith: { code: status.UNAVAILABLE, details: 'x' },
    });
    env.server.setResources('cluster', [edsCluster('A')]);
    const tick = mockClock(t);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    /** After the `ended`-th stream ended, the next one starts `delay` later, not 1 ms sooner. */
    const nextStartsAfter = async (ended: number, delay: number) => {
      await events.disconnected(ended);
      tick(delay - 1);
      assert.equal(starts.length, ended, `stream ${ended + 1} started before ${delay} ms`);
      tick(1);
      assert.equal(starts.length, ended + 1, `stream ${ended + 1} did not start at ${delay} ms`);
    };
    await nextStartsAfter(1, 100);
    await nextStartsAfter(2, 300);
    await events.disconnected(3);
    env.server.setStreamFault(undefined);
    await nextStartsAfter(3, 900);
    await w.skipUntil('changed'); // streams 1-3 gave UNAVAILABLE; stream 4 is healthy
    assert.deepEqual(
      w.events.map((e) => e.kind),
      ['error', 'error', 'error', 'changed'],
    );
    assert.deepEqual(
      starts.map((s) => s - starts[0]!),
      [0, 100, 400, 1300],
    );

    // The healthy stream reset the backoff (not 2700 ms); it lived no time at all, so the
    // next one waits the initial delay.
    env.server.endStreams(status.UNAVAILABLE, 'restart');
    await nextStartsAfter(4, 100);
  });

  it('a healthy stream that lived past the initial delay reconnects at once', async (t) => {
    const { transportFactory, starts } = timedStreams();
    env = await startEnv({
      backoff: { initialMs: 100, multiplier: 3, jitter: 0 },
      transportFactory,
    });
    const events = new ClientEvents(env.client);
    env.server.setResources('cluster', [edsCluster('A')]);
    const tick = mockClock(t);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await w.next('changed');
    // Its ACK reaches the server before the stream ends: `settled` below waits for the answer
    // to the last response, which an ACK lost with its stream would never give.
    await settled(env.server);
    tick(100); // the stream has lived the initial delay
    env.server.endStreams(status.UNAVAILABLE, 'server rolling over');
    await events.disconnected(1);
    assert.equal(starts.length, 2, 'the next stream started with no wait');
    assert.deepEqual(
      starts.map((s) => s - starts[0]!),
      [0, 100],
    );
    await w.expectNothingUntil(settled(env.server));
  });

  it('a server that answers and closes at once gets one stream per initial delay', async (t) => {
    const { transportFactory, starts } = timedStreams();
    env = await startEnv({
      backoff: { initialMs: 100, multiplier: 3, jitter: 0 },
      transportFactory,
    });
    const events = new ClientEvents(env.client);
    let connected = 0;
    env.client.on('connected', () => connected++);
    env.server.setResources('cluster', [edsCluster('A')]);
    const tick = mockClock(t);
    env.client.watchCluster('A', new RecordingWatcher<ClusterUpdate>());
    for (let stream = 1; stream <= 3; stream++) {
      await until(`stream ${stream} answered`, () => connected === stream);
      tick(30); // a short-lived stream: 30 ms
      env.server.endStreams(status.UNAVAILABLE, 'closed right after answering');
      await events.disconnected(stream);
      tick(69);
      assert.equal(starts.length, stream, `stream ${stream + 1} started before 100 ms`);
      tick(1);
      assert.equal(starts.length, stream + 1, `stream ${stream + 1} did not start at 100 ms`);
    }
    // one stream start per initial delay, the backoff reset by each answer (never 300 ms)
    assert.deepEqual(
      starts.map((s) => s - starts[0]!),
      [0, 100, 200, 300],
    );
  });

  it('re-watching after an error does not get around the backoff', async (t) => {
    // A consumer that cancels and watches again on every error, against a server that cannot
    // be reached: the client disconnects the idle server in between, and must still wait.
    const { transportFactory, starts } = timedStreams();
    const tick = mockClock(t);
    const client = new XdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }],
      },
      backoff: { initialMs: 300, multiplier: 2, maxMs: 10_000, jitter: 0 },
      transportFactory,
    });
    let watches = 0;
    let stopped = false;
    const watch = () => {
      watches++;
      const handle = client.watchCluster('A', {
        onResourceChanged() {},
        onResourceError() {
          handle.cancel();
          if (!stopped) setImmediate(watch);
        },
      });
    };
    try {
      watch();
      for (const [failures, delay] of [
        [1, 300],
        [2, 600],
      ] as const) {
        // The consumer has heard of the failure, cancelled, and watched again.
        await until(`re-watch ${failures}`, () => watches === failures + 1);
        tick(delay - 1);
        assert.equal(starts.length, failures, `attempt ${failures + 1} before ${delay} ms`);
        tick(1);
        assert.equal(starts.length, failures + 1, `no attempt ${failures + 1} at ${delay} ms`);
      }
      // attempts at 0, 300 and 900 ms, as if nobody had re-watched
      assert.deepEqual(
        starts.map((s) => s - starts[0]!),
        [0, 300, 900],
      );
    } finally {
      stopped = true;
      client.close();
    }
  });
});
