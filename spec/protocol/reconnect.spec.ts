// Stream ends and reconnects (gRFC A57), with a fast, jitter-free backoff.
//
// 1. A stream that ends after a response is normal: nobody is told, and the next stream
//    re-subscribes every type with its last ACKed version and no nonce.
// 2. A stream that fails before any response is a connectivity error: ambient for watchers
//    of cached resources, a resource error for the others; nothing cached is lost.
// 3. An unreachable server gives UNAVAILABLE naming the server.
// 4. The backoff grows while streams fail, and resets after a healthy stream — which still
//    waits the initial delay before reconnecting.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, XdsClient, type ClusterUpdate, type EndpointUpdate } from '../../lib';
import { edsCluster, endpoints } from '../../lib/testing';
import { TEST_BACKOFF } from '../helpers/constants';
import { CDS, EDS, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

/** The time each stream's first request reached the server. */
function streamStarts(env: Env): number[] {
  const starts = new Map<number, number>();
  for (const r of env.server.requests)
    if (!starts.has(r.streamId)) starts.set(r.streamId, r.receivedAt);
  return [...starts.values()];
}

describe('reconnect', () => {
  let env: Env;
  afterEach(() => env?.close());

  it('a-stream-ending-after-a-response-notifies-nobody-and-resubscribes-with-last-acked-versions', async () => {
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
    // The server re-sends the same resources: identical bytes, so nobody is told anything.
    await env.server.waitForRequest((r) => r.typeUrl === EDS && r.responseNonce !== '', {
      after: mark,
    });
    await cw.expectNothing();
    await ew.expectNothing();
  });

  it('a-stream-failing-before-any-response-gives-ambient-and-resource-errors-and-keeps-the-cache', async () => {
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

  it('an-unreachable-server-gives-unavailable-naming-the-server', async () => {
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

  it('backoff-grows-while-streams-fail-and-resets-after-a-healthy-stream', async () => {
    const backoff = { initialMs: 100, multiplier: 3, maxMs: 10_000, jitter: 0 };
    env = await startEnv({ backoff });
    env.server.setStreamFault({
      endBeforeResponseWith: { code: status.UNAVAILABLE, details: 'x' },
    });
    env.server.setResources('cluster', [edsCluster('A')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await env.server.waitForStreams(3, { timeoutMs: 5000 });
    env.server.setStreamFault(undefined);
    await env.server.waitForStreams(4, { timeoutMs: 5000 });
    await w.skipUntil('changed', 5000); // streams 1-3 gave UNAVAILABLE; stream 4 is healthy
    let starts = streamStarts(env);
    const gap1 = starts[1]! - starts[0]!;
    const gap3 = starts[3]! - starts[2]!;
    assert.ok(gap1 >= 90, `first retry after the initial delay, got ${gap1} ms`);
    assert.ok(gap3 >= 800, `third retry after 100 ms × 3², got ${gap3} ms`);

    const before = new Set(env.server.requests.map((r) => r.streamId));
    env.server.endStreams(status.UNAVAILABLE, 'restart');
    const ended = Date.now();
    await env.server.waitForRequest((r) => !before.has(r.streamId));
    starts = streamStarts(env);
    const gap = starts[4]! - ended;
    assert.ok(gap >= 80, `even after a healthy stream the initial delay applies, got ${gap} ms`);
    assert.ok(gap < 600, `the backoff was reset by the healthy stream, got ${gap} ms`);
  });

  it('re-watching-after-an-error-does-not-get-around-the-backoff', async () => {
    // A consumer that cancels and watches again on every error, against a server that cannot
    // be reached: the client disconnects the idle server in between, and must still wait.
    const client = new XdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }],
      },
      backoff: { initialMs: 300, multiplier: 2, maxMs: 10_000, jitter: 0 },
    });
    let failures = 0;
    client.on('disconnected', () => failures++);
    let stopped = false;
    const watch = () => {
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
      await new Promise((resolve) => setTimeout(resolve, 1000));
      // attempts at about 0, 300 and 900 ms
      assert.ok(failures >= 2 && failures <= 4, `${failures} stream attempts in 1 s`);
    } finally {
      stopped = true;
      client.close();
    }
  });
});
