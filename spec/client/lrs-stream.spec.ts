// One LRS stream (lib/client/lrs/lrs-stream.ts) against the test server's LoadReportingService:
// the node on each stream's first request, reports at the server's interval with the measured
// interval, an idle client quiet after one empty report, reconnection with backoff without
// losing counts, and close() leaving nothing running.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { status } from '@grpc/grpc-js';
import type { BackoffOptions } from '../../lib';
import { loadBootstrap, type Bootstrap } from '../../lib';
import { LRS_SEND_ALL_CLUSTERS_FEATURE, LrsStream } from '../../lib/client/lrs/lrs-stream';
import { CLIENT_FEATURES } from '../../lib/client/transport/node';
import { ManagementServer, type RecordedLoadReport } from '../../lib/testing';
import { trackTimers } from '../grpc/helpers/backends';
import { TEST_BACKOFF } from '../helpers/constants';
import { until, waitFor } from '../helpers/wait';

const LOCALITY = { region: 'r', zone: 'z', subZone: '' };

/** Report timers the stream has set since the hook was made (one per interval). */
function countReportTimers(): { readonly count: number; stop(): void } {
  let count = 0;
  const hook = createHook({
    init(_id, type) {
      if (type !== 'Timeout') return;
      if (/scheduleReport/.test(new Error().stack ?? '')) count++;
    },
  });
  hook.enable();
  return {
    get count() {
      return count;
    },
    stop: () => hook.disable(),
  };
}

const hasLoad = (r: RecordedLoadReport) => r.clusterStats.length > 0;

describe('LrsStream', () => {
  let server: ManagementServer;
  let stream: LrsStream | undefined;
  let bootstrap: Bootstrap;

  async function start(
    options: { now?: () => number; backoff?: BackoffOptions } = {},
  ): Promise<LrsStream> {
    server = await ManagementServer.start();
    bootstrap = loadBootstrap(server.bootstrap({ nodeId: 'lrs-spec', nodeCluster: 'nc' }));
    stream = new LrsStream(bootstrap.xdsServers[0]!, bootstrap.node, {
      backoff: TEST_BACKOFF,
      ...options,
    });
    return stream;
  }

  afterEach(async () => {
    stream?.close();
    stream = undefined;
    await server?.close();
  });

  it('sends the node (with the send_all_clusters feature) on the first request only', async () => {
    const s = await start();
    server.setLoadReporting({ sendAllClusters: true, intervalMs: 10 });
    const load = s.store.acquire('A', undefined);
    s.start();
    load.locality(LOCALITY).callStarted();
    await server.waitForLoadReport(hasLoad);
    const [first, ...rest] = server.loadReports;
    assert.equal(first?.node?.id, 'lrs-spec');
    assert.equal(first?.node?.cluster, 'nc');
    assert.deepEqual(first?.node?.clientFeatures, [
      ...CLIENT_FEATURES,
      LRS_SEND_ALL_CLUSTERS_FEATURE,
    ]);
    assert.deepEqual(first?.clusterStats, []);
    assert.ok(rest.length > 0 && rest.every((r) => r.node === undefined));
  });

  it('sends nothing but its first request until the server says what it wants', async () => {
    const s = await start();
    // The default answer (every cluster, every second) is replaced before the stream opens.
    server.setLoadReporting({ clusters: ['A'], intervalMs: 60_000 });
    const load = s.store.acquire('A', undefined);
    load.locality(LOCALITY).callStarted();
    s.start();
    await server.waitForLoadReport(() => true);
    const mark = server.loadReports.length;
    // Now the server asks for reports every 10 ms: the first one carries the call.
    server.setLoadReporting({ clusters: ['A'], intervalMs: 10 });
    const report = await server.waitForLoadReport(hasLoad, { after: mark });
    assert.equal(report.clusterStats[0]?.upstreamLocalityStats[0]?.totalIssuedRequests, 1);
    assert.equal(server.loadReports.length - mark, 1, 'the report is the first request since');
  });

  it('load_report_interval is the time each report covers', async () => {
    const clock = { now: 0 };
    const s = await start({ now: () => clock.now });
    server.setLoadReporting({ clusters: ['A'], intervalMs: 10 });
    const load = s.store.acquire('A', undefined);
    s.start();
    load.dropped('x');
    clock.now = 1234.5;
    const first = await server.waitForLoadReport(hasLoad);
    assert.equal(first.clusterStats[0]?.loadReportIntervalMs, 1234.5);
    const mark = server.loadReports.indexOf(first) + 1;
    load.dropped('x');
    clock.now = 1500;
    const second = await server.waitForLoadReport(hasLoad, { after: mark });
    assert.equal(second.clusterStats[0]?.loadReportIntervalMs, 265.5);
  });

  it('an idle client sends one empty report, then nothing until it has load', async () => {
    const s = await start();
    server.setLoadReporting({ sendAllClusters: true, intervalMs: 10 });
    const load = s.store.acquire('A', undefined);
    const timers = countReportTimers();
    try {
      s.start();
      await server.waitForLoadReport((r) => r.node === undefined && !hasLoad(r));
      // Five more intervals pass with nothing to say.
      const from = timers.count;
      await until('five more report intervals', () => timers.count >= from + 5);
    } finally {
      timers.stop();
    }
    load.locality(LOCALITY).callStarted();
    // The stream keeps its order: anything written before this report arrived before it.
    const withLoad = await server.waitForLoadReport(hasLoad);
    const between = server.loadReports.slice(1, server.loadReports.indexOf(withLoad));
    assert.equal(between.length, 1, `one empty report: ${JSON.stringify(between)}`);
  });

  it('reconnects with backoff when the stream ends; the node again, and no count lost', async () => {
    // A wide backoff, so that the spec can count while the stream is surely down: a report
    // written in the instant between the server's end and the client seeing it is lost with the
    // stream (nothing acknowledges LRS reports), and that is not what this spec is about.
    const timers = trackTimers(/[\\/]lib[\\/]client[\\/]lrs[\\/]lrs-stream/);
    try {
      const s = await start({ backoff: { ...TEST_BACKOFF, initialMs: 300, maxMs: 300 } });
      server.setLoadReporting({ sendAllClusters: true, intervalMs: 10 });
      const load = s.store.acquire('A', undefined);
      const z = load.locality(LOCALITY);
      s.start();
      z.callStarted();
      z.callFinished(true);
      await server.waitForLoadReport(hasLoad);
      // Ended after answering: counted while the stream is down, reported on the next one.
      server.endLoadReportingStreams(status.UNAVAILABLE, 'restart');
      await waitFor('the client waiting to reconnect', () =>
        timers.pending().some((t) => /retryLater/.test(t.stack)) ? true : undefined,
      );
      z.callStarted();
      z.callFinished(false);
      await until('a second LRS stream', () => server.loadReportingStreamsOpened === 2);
      const again = await server.waitForLoadReport((r) => r.streamId === 2 && hasLoad(r));
      assert.equal(server.loadReports.find((r) => r.streamId === 2)?.node?.id, 'lrs-spec');
      assert.equal(again.clusterStats[0]?.upstreamLocalityStats[0]?.totalErrorRequests, 1);

      // A server that fails streams before answering: the client keeps trying, with backoff.
      server.endLoadReportingStreams(status.UNAVAILABLE, 'down');
      await until('a third LRS stream', () => server.loadReportingStreamsOpened >= 3);
    } finally {
      timers.stop();
    }
  });

  it('close() ends the stream and clears every timer, even during a backoff', async () => {
    const timers = trackTimers(/[\\/]lib[\\/]client[\\/]lrs[\\/]lrs-stream/);
    try {
      const s = await start();
      server.setLoadReporting({ sendAllClusters: true, intervalMs: 10 });
      s.start();
      await server.waitForLoadReport(() => true);
      await until('the stream is open', () => server.loadReportingStreamCount === 1);
      s.close();
      await until('the server saw it end', () => server.loadReportingStreamCount === 0);
      assert.deepEqual(timers.pending(), []);

      // Closed while waiting to reconnect.
      const other = new LrsStream(bootstrap.xdsServers[0]!, bootstrap.node, {
        backoff: { ...TEST_BACKOFF, initialMs: 60_000 },
      });
      other.start();
      await until('its stream is open', () => server.loadReportingStreamCount === 1);
      server.endLoadReportingStreams(status.UNAVAILABLE, 'bye');
      await waitFor('the retry timer', () =>
        timers.pending().some((t) => /retryLater/.test(t.stack)) ? true : undefined,
      );
      other.close();
      assert.deepEqual(timers.pending(), []);
      assert.equal(server.loadReportingStreamsOpened, 2);
    } finally {
      timers.stop();
    }
  });
});
