// End to end: load reporting (LRS) through a real grpc-js channel on `xds:///…`. Clusters with
// `lrs_server: self` report to our ManagementServer's LRS service: per cluster and EDS service
// name, per locality, RPCs issued, succeeded, errored and in flight; drops per category and in
// total (circuit breaking in the total only). Every RPC a spec sends is counted, so the sums
// of the reports must equal what the spec saw, exactly.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
// Internal on purpose: no public view counts the process's LRS streams, and none may leak.
import { openLoadReportingStreams } from '../../../lib/client/lrs/load-reporting';
import { RESOURCE_TIMEOUT_OPTION } from '../../../lib/grpc';
import {
  edsCluster,
  endpoints,
  type JsonObject,
  type ManagementServer,
  type RecordedLoadReport,
} from '../../../lib/testing';
import { trackTimers, waitForResourcesBack, waitUntil } from '../helpers/backends';
import {
  everything,
  failedKey,
  sendRpc,
  sendRpcs,
  show,
  startXdsEnv,
  type XdsEnv,
} from '../helpers/xds-env';

/** Short, so that reports come quickly; every wait is still bounded. */
const INTERVAL_MS = 30;

interface LocalityTotals {
  issued: number;
  succeeded: number;
  errored: number;
}

/** One cluster's counts added up over reports, and the last in-flight gauge it reported. */
interface Totals extends LocalityTotals {
  /** Sum over localities in the cluster's latest report (0 when it was not in a report). */
  inProgress: number;
  dropped: number;
  byCategory: Record<string, number>;
  /** By zone. */
  byLocality: Record<string, LocalityTotals>;
  reports: number;
  serviceNames: Set<string>;
}

function emptyTotals(): Totals {
  return {
    issued: 0,
    succeeded: 0,
    errored: 0,
    inProgress: 0,
    dropped: 0,
    byCategory: {},
    byLocality: {},
    reports: 0,
    serviceNames: new Set(),
  };
}

function add(totals: Totals, report: RecordedLoadReport, cluster: string): void {
  let inProgress = 0;
  for (const stats of report.clusterStats) {
    if (stats.clusterName !== cluster) continue;
    totals.reports++;
    totals.serviceNames.add(stats.clusterServiceName);
    totals.dropped += stats.totalDroppedRequests;
    for (const d of stats.droppedRequests) {
      totals.byCategory[d.category] = (totals.byCategory[d.category] ?? 0) + d.droppedCount;
    }
    for (const l of stats.upstreamLocalityStats) {
      const zone = l.locality.zone;
      const entry = (totals.byLocality[zone] ??= { issued: 0, succeeded: 0, errored: 0 });
      entry.issued += l.totalIssuedRequests;
      entry.succeeded += l.totalSuccessfulRequests;
      entry.errored += l.totalErrorRequests;
      totals.issued += l.totalIssuedRequests;
      totals.succeeded += l.totalSuccessfulRequests;
      totals.errored += l.totalErrorRequests;
      inProgress += l.totalRequestsInProgress;
    }
  }
  // A report is taken for every cluster at once: one without this cluster means it had nothing
  // in flight.
  if (report.clusterStats.length > 0) totals.inProgress = inProgress;
}

/**
 * Adds up `cluster`'s load over every report (from index `after`) until `done` holds, and
 * returns the totals; fails with them after the deadline.
 */
async function waitForTotals(
  server: ManagementServer,
  cluster: string,
  done: (t: Totals) => boolean,
  options: { after?: number; timeoutMs?: number } = {},
): Promise<Totals> {
  const totals = emptyTotals();
  try {
    await server.waitForLoadReport(
      (report) => {
        add(totals, report, cluster);
        return done(totals);
      },
      { after: options.after ?? 0, timeoutMs: options.timeoutMs ?? 5000 },
    );
  } catch (e) {
    throw new Error(`${cluster}: totals ${showTotals(totals)}; ${(e as Error).message}`, {
      cause: e,
    });
  }
  return totals;
}

function showTotals(t: Totals): string {
  return JSON.stringify({ ...t, serviceNames: [...t.serviceNames] });
}

/** Everything sent has been counted out: issued == succeeded + errored, nothing in flight. */
function settled(t: Totals, issued: number): boolean {
  return t.issued === issued && t.succeeded + t.errored === issued && t.inProgress === 0;
}

function withDrops(base: JsonObject, drops: [string, number][]): JsonObject {
  return {
    ...base,
    policy: {
      drop_overloads: drops.map(([category, percent]) => ({
        category,
        drop_percentage: { numerator: percent, denominator: 'HUNDRED' },
      })),
    },
  };
}

/** Sends batches of RPCs until every backend named has answered one; returns all counts. */
async function sendUntilAllAnswer(
  client: grpc.Client,
  names: readonly string[],
  maxRpcs = 500,
): Promise<Map<string, number>> {
  const all = new Map<string, number>();
  let sent = 0;
  while (!names.every((n) => all.has(n))) {
    if (sent >= maxRpcs) assert.fail(`not all of ${names} answered in ${sent} RPCs: ${show(all)}`);
    const batch = await sendRpcs(client, 20, { waitForReady: true });
    sent += 20;
    for (const [key, n] of batch) all.set(key, (all.get(key) ?? 0) + n);
  }
  return all;
}

function metadata(entries: Record<string, string>): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [key, value] of Object.entries(entries)) md.set(key, value);
  return md;
}

describe('e2e: load reporting (LRS)', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b']);
  });
  afterEach(() => env.close());

  /** Cluster `echo` (reporting load) over two localities: zone z-a → a, zone z-b → b. */
  function serveTwoLocalities(extra: { endpoints?: (e: JsonObject) => JsonObject } = {}) {
    const assignment = endpoints('echo', [
      { locality: { region: 'r', zone: 'z-a' }, addresses: env.addresses('a') },
      { locality: { region: 'r', zone: 'z-b' }, addresses: env.addresses('b') },
    ]);
    env.serve({
      clusters: [edsCluster('echo', { loadReporting: true })],
      endpoints: [extra.endpoints ? extra.endpoints(assignment) : assignment],
    });
  }

  it('reports exactly the RPCs sent, per locality, with the node on the first request', async () => {
    env.server.setLoadReporting({ clusters: ['echo'], intervalMs: INTERVAL_MS });
    serveTwoLocalities();
    const client = env.client();
    const counts = await sendUntilAllAnswer(client, ['a', 'b']);
    const sent = [...counts.values()].reduce((x, y) => x + y, 0);
    assert.equal(counts.size, 2, `every RPC answered: ${show(counts)}`);

    const totals = await waitForTotals(env.server, 'echo', (t) => settled(t, sent));
    assert.deepEqual(totals.byLocality, {
      'z-a': { issued: counts.get('a'), succeeded: counts.get('a'), errored: 0 },
      'z-b': { issued: counts.get('b'), succeeded: counts.get('b'), errored: 0 },
    });
    assert.equal(totals.dropped, 0);
    assert.deepEqual([...totals.serviceNames], ['']);

    const [first] = env.server.loadReports;
    assert.equal(first?.node?.id, 'test-node');
    assert.ok(first?.node?.clientFeatures.includes('envoy.lrs.supports_send_all_clusters'));
    assert.ok(env.server.loadReports.slice(1).every((r) => r.node === undefined));
    const region = env.server.loadReports
      .flatMap((r) => r.clusterStats.flatMap((c) => c.upstreamLocalityStats))
      .map((l) => l.locality.region);
    assert.ok(region.length > 0 && region.every((r) => r === 'r'));
    for (const report of env.server.loadReports) {
      for (const c of report.clusterStats) {
        assert.ok(c.loadReportIntervalMs > 0, `a measured interval: ${c.loadReportIntervalMs}`);
      }
    }
  });

  it('a backend that fails with a status counts as errored in its locality', async () => {
    env.server.setLoadReporting({ clusters: ['echo'], intervalMs: INTERVAL_MS });
    env.backends.b!.behaviour = { code: grpc.status.INTERNAL, details: 'b fails' };
    serveTwoLocalities();
    const client = env.client();
    const counts = await sendUntilAllAnswer(client, ['a', failedKey(grpc.status.INTERNAL)]);
    const answered = counts.get('a') ?? 0;
    const failed = counts.get(failedKey(grpc.status.INTERNAL)) ?? 0;
    assert.equal(
      answered + failed,
      [...counts.values()].reduce((x, y) => x + y, 0),
    );

    const totals = await waitForTotals(env.server, 'echo', (t) => settled(t, answered + failed));
    assert.deepEqual(totals.byLocality, {
      'z-a': { issued: answered, succeeded: answered, errored: 0 },
      'z-b': { issued: failed, succeeded: 0, errored: failed },
    });
  });

  it('drop_overloads: drops per category and in total; dropped RPCs are never issued', async () => {
    env.server.setLoadReporting({ clusters: ['echo'], intervalMs: INTERVAL_MS });
    serveTwoLocalities({
      endpoints: (e) =>
        withDrops(e, [
          ['lb', 30],
          ['throttle', 30],
        ]),
    });
    const client = env.client();
    const byCategory: Record<string, number> = {};
    let answered = 0;
    await Promise.all(
      Array.from({ length: 200 }, () =>
        sendRpc(client, { waitForReady: true }).then(
          () => answered++,
          (e: grpc.ServiceError) => {
            assert.equal(e.code, grpc.status.UNAVAILABLE, e.details);
            const category = /category "([^"]+)"/.exec(e.details)?.[1] ?? `? ${e.details}`;
            byCategory[category] = (byCategory[category] ?? 0) + 1;
          },
        ),
      ),
    );
    const dropped = 200 - answered;
    assert.ok(byCategory['lb']! > 0 && byCategory['throttle']! > 0, JSON.stringify(byCategory));

    const totals = await waitForTotals(
      env.server,
      'echo',
      (t) => settled(t, answered) && t.dropped === dropped,
    );
    assert.deepEqual(totals.byCategory, byCategory);
    assert.equal(totals.succeeded, answered);
  });

  it('drop_overloads at 100 %: every RPC is a drop of its category', async () => {
    env.server.setLoadReporting({ clusters: ['echo'], intervalMs: INTERVAL_MS });
    serveTwoLocalities({ endpoints: (e) => withDrops(e, [['all', 100]]) });
    const client = env.client();
    const counts = await sendRpcs(client, 25, { waitForReady: true });
    assert.equal(counts.get(failedKey(grpc.status.UNAVAILABLE)), 25, show(counts));
    const totals = await waitForTotals(env.server, 'echo', (t) => t.dropped === 25);
    assert.deepEqual(totals.byCategory, { all: 25 });
    assert.equal(totals.issued, 0);
  });

  it('circuit breaking: drops in the total only; RPCs in flight are a gauge; hanging ones end as errors', async () => {
    env.server.setLoadReporting({ clusters: ['echo'], intervalMs: INTERVAL_MS });
    env.serve({
      clusters: [
        {
          ...edsCluster('echo', { loadReporting: true }),
          circuit_breakers: { thresholds: [{ max_requests: 2 }] },
        },
      ],
      endpoints: [
        endpoints('echo', [{ locality: { zone: 'z-a' }, addresses: env.addresses('a') }]),
      ],
    });
    const client = env.client();
    assert.equal(await sendRpc(client, { waitForReady: true }), 'a'); // connected, configured
    env.backends.a!.behaviour = 'hang';
    const mark = env.server.loadReports.length;
    // Ten RPCs in one tick: two pass the limit and hang until their deadline, eight are dropped.
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, () =>
        sendRpc(client, { deadlineMs: 1500 }).then(
          () => 'answered',
          (e: grpc.ServiceError) => grpc.status[e.code],
        ),
      ),
    );
    const tally = new Map<string, number>();
    for (const o of outcomes) tally.set(o, (tally.get(o) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(tally), { UNAVAILABLE: 8, DEADLINE_EXCEEDED: 2 });

    const totals = await waitForTotals(env.server, 'echo', (t) => settled(t, 3) && t.dropped === 8);
    assert.deepEqual(totals.byCategory, {}, 'circuit-breaking drops have no category');
    assert.deepEqual(totals.byLocality, { 'z-a': { issued: 3, succeeded: 1, errored: 2 } });
    const gauges = env.server.loadReports
      .slice(mark)
      .flatMap((r) => r.clusterStats.flatMap((c) => c.upstreamLocalityStats))
      .map((l) => l.totalRequestsInProgress);
    assert.ok(gauges.includes(2), `two RPCs seen in flight: gauges ${JSON.stringify(gauges)}`);
  });

  describe('which clusters', () => {
    /** `echo` over a and `other` (EDS service name other-eds) over b, both reporting load. */
    function serveTwoClusters() {
      env.serve({
        clusters: [
          edsCluster('echo', { loadReporting: true }),
          edsCluster('other', { loadReporting: true, serviceName: 'other-eds' }),
        ],
        endpoints: [
          endpoints('echo', [{ locality: { zone: 'z-a' }, addresses: env.addresses('a') }]),
          endpoints('other-eds', [{ locality: { zone: 'z-b' }, addresses: env.addresses('b') }]),
        ],
        routes: [
          {
            match: { prefix: '', headers: [{ name: 'x-cluster', exact_match: 'other' }] },
            route: { cluster: 'other' },
          },
          everything('echo'),
        ],
      });
    }
    const toOther = () => ({ waitForReady: true, metadata: metadata({ 'x-cluster': 'other' }) });

    it('a server that names exactly one cluster gets its reports, and only its', async () => {
      env.server.setLoadReporting({ clusters: ['echo'], intervalMs: INTERVAL_MS });
      serveTwoClusters();
      const client = env.client();
      const toEcho = await sendRpcs(client, 12, { waitForReady: true });
      const toB = await sendRpcs(client, 7, toOther());
      assert.equal(toEcho.get('a'), 12, show(toEcho));
      assert.equal(toB.get('b'), 7, show(toB));

      const echo = await waitForTotals(env.server, 'echo', (t) => settled(t, 12));
      assert.equal(echo.succeeded, 12);
      const named = env.server.loadReports.flatMap((r) => r.clusterStats.map((c) => c.clusterName));
      assert.ok(!named.includes('other'), `only echo is reported: ${named}`);

      // What other counted meanwhile is reported once the server asks for it.
      const mark = env.server.loadReports.length;
      env.server.setLoadReporting({ clusters: ['other'], intervalMs: INTERVAL_MS });
      const other = await waitForTotals(env.server, 'other', (t) => settled(t, 7), {
        after: mark,
      });
      assert.deepEqual(other.byLocality, { 'z-b': { issued: 7, succeeded: 7, errored: 0 } });
      assert.deepEqual([...other.serviceNames], ['other-eds']);
    });

    it('send_all_clusters: every cluster with load is reported, with its EDS service name', async () => {
      env.server.setLoadReporting({ sendAllClusters: true, intervalMs: INTERVAL_MS });
      serveTwoClusters();
      const client = env.client();
      await sendRpcs(client, 5, { waitForReady: true });
      await sendRpcs(client, 4, toOther());
      const echo = await waitForTotals(env.server, 'echo', (t) => settled(t, 5));
      const other = await waitForTotals(env.server, 'other', (t) => settled(t, 4));
      assert.deepEqual([...echo.serviceNames], ['']);
      assert.deepEqual([...other.serviceNames], ['other-eds']);
      assert.equal(echo.succeeded + other.succeeded, 9);
    });
  });

  describe('streams', () => {
    it('a closed channel leaves no LRS stream and no timer behind', async () => {
      env.server.setLoadReporting({ clusters: ['echo'], intervalMs: INTERVAL_MS });
      serveTwoLocalities();
      const baseline = process.getActiveResourcesInfo();
      const timers = trackTimers(/[\\/]lib[\\/](client|grpc)[\\/]/);
      try {
        const client = env.client();
        await sendRpcs(client, 10, { waitForReady: true });
        await waitForTotals(env.server, 'echo', (t) => settled(t, 10));
        assert.equal(env.server.loadReportingStreamCount, 1);
        assert.equal(openLoadReportingStreams(), 1);

        client.close();
        await waitUntil(
          'the server saw the LRS stream end',
          () => env.server.loadReportingStreamCount === 0,
          3000,
        );
        assert.equal(openLoadReportingStreams(), 0);
        await waitForResourcesBack(baseline, 3000);
        await waitUntil(
          'every timer fired or was cleared',
          () => timers.pending().length === 0,
          3000,
        ).catch((e: Error) => {
          const stacks = timers.pending().map((t) => t.stack);
          throw new Error(`${e.message}; pending, created at:\n${stacks.join('\n\n')}`);
        });
      } finally {
        timers.stop();
      }
    });

    it('two channels (two xDS clients) share one LRS stream, which ends with the last of them', async () => {
      env.server.setLoadReporting({ clusters: ['echo'], intervalMs: INTERVAL_MS });
      serveTwoLocalities();
      const first = env.client();
      // Another resource timeout: another XdsClient and ADS stream, the same LRS server.
      const second = env.client({ [RESOURCE_TIMEOUT_OPTION]: 4000 });
      await sendRpcs(first, 6, { waitForReady: true });
      await sendRpcs(second, 4, { waitForReady: true });
      assert.equal(env.server.streamCount, 2, 'two ADS streams');
      const both = await waitForTotals(env.server, 'echo', (t) => settled(t, 10));
      assert.equal(both.succeeded, 10);
      assert.equal(env.server.loadReportingStreamsOpened, 1, 'one LRS stream');

      first.close();
      const mark = env.server.loadReports.length;
      await sendRpcs(second, 3, { waitForReady: true });
      await waitForTotals(env.server, 'echo', (t) => settled(t, 3), { after: mark });
      assert.equal(env.server.loadReportingStreamCount, 1, 'the stream outlives the first');
      assert.equal(env.server.loadReportingStreamsOpened, 1);

      second.close();
      await waitUntil('the LRS stream ended', () => env.server.loadReportingStreamCount === 0);
      assert.equal(openLoadReportingStreams(), 0);
    });
  });
});
