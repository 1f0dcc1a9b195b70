// End to end: backend metrics in load reports (gRFC A64, A85). Backends send per-call ORCA
// reports in their trailers; the cluster's lrs_report_endpoint_metrics says which of their
// fields the client sums, per locality, into the LRS reports the ManagementServer records.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type * as grpc from '@grpc/grpc-js';
import {
  edsCluster,
  endpoints,
  type JsonObject,
  type ManagementServer,
  type RecordedLocalityStats,
} from '../../../lib/testing';
import { sendRpcs, show, startXdsEnv, type XdsEnv } from '../helpers/xds-env';

/** Short, so that reports come quickly; every wait is still bounded. */
const INTERVAL_MS = 30;
/** Generous: on a loaded machine an RPC that times out has no ORCA report to count. */
const RPC_DEADLINE_MS = 10_000;

/** One metric summed over reports: calls that reported it, and the sum of their values. */
interface Sum {
  count: number;
  total: number;
}

/** What the reports of one locality add up to. */
interface LocalitySums {
  /** RPCs that ended with OK: those are the ones whose backend sent a report. */
  succeeded: number;
  cpu?: Sum;
  mem?: Sum;
  application?: Sum;
  named: Record<string, Sum>;
}

function addSum(into: Sum | undefined, count: number, total: number): Sum {
  return { count: (into?.count ?? 0) + count, total: (into?.total ?? 0) + total };
}

function addLocality(sums: LocalitySums, l: RecordedLocalityStats): void {
  sums.succeeded += l.totalSuccessfulRequests;
  if (l.cpuUtilization) {
    const { numRequestsFinishedWithMetric: n, totalMetricValue: v } = l.cpuUtilization;
    sums.cpu = addSum(sums.cpu, n, v);
  }
  if (l.memUtilization) {
    const { numRequestsFinishedWithMetric: n, totalMetricValue: v } = l.memUtilization;
    sums.mem = addSum(sums.mem, n, v);
  }
  if (l.applicationUtilization) {
    const { numRequestsFinishedWithMetric: n, totalMetricValue: v } = l.applicationUtilization;
    sums.application = addSum(sums.application, n, v);
  }
  for (const m of l.loadMetricStats ?? []) {
    sums.named[m.metricName] = addSum(
      sums.named[m.metricName],
      m.numRequestsFinishedWithMetric,
      m.totalMetricValue,
    );
  }
}

/** Adds up cluster `echo`'s reports by zone until `finished` RPCs are counted as finished. */
async function sumsByZone(
  server: ManagementServer,
  finished: number,
): Promise<Record<string, LocalitySums>> {
  const byZone: Record<string, LocalitySums> = {};
  let seen = 0;
  await server.waitForLoadReport(
    (report) => {
      for (const c of report.clusterStats) {
        if (c.clusterName !== 'echo') continue;
        for (const l of c.upstreamLocalityStats) {
          addLocality((byZone[l.locality.zone] ??= { succeeded: 0, named: {} }), l);
          seen += l.totalSuccessfulRequests + l.totalErrorRequests;
        }
      }
      return seen >= finished;
    },
    { timeoutMs: 5000 },
  );
  return byZone;
}

/**
 * Sends batches of RPCs until both a and b have answered; returns the counts (failed RPCs
 * under their failedKey) and how many were sent.
 */
async function sendUntilBothAnswer(
  client: grpc.Client,
): Promise<{ counts: Map<string, number>; sent: number }> {
  const counts = new Map<string, number>();
  let sent = 0;
  for (; !(counts.has('a') && counts.has('b')); sent += 20) {
    if (sent >= 400) assert.fail(`a and b did not both answer in ${sent} RPCs: ${show(counts)}`);
    const batch = await sendRpcs(client, 20, { waitForReady: true, deadlineMs: RPC_DEADLINE_MS });
    for (const [key, n] of batch) counts.set(key, (counts.get(key) ?? 0) + n);
  }
  return { counts, sent };
}

describe('e2e: backend metrics in load reports (ORCA to LRS)', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b'], { metrics: true });
    // Binary fractions: sums of them are exact.
    env.backends.a!.loadReport = {
      cpuUtilization: 0.5,
      memUtilization: 0.25,
      applicationUtilization: 0.75,
      named: { queue: 2, other: 1 },
    };
    env.backends.b!.loadReport = { cpuUtilization: 0.125, named: { queue: 3 } };
    env.server.setLoadReporting({ clusters: ['echo'], intervalMs: INTERVAL_MS });
  });
  afterEach(() => env.close());

  /** Cluster `echo` reporting load, zone z-a → a, zone z-b → b, with `metrics` selected. */
  function serve(metrics: readonly string[] | undefined): void {
    const cluster: JsonObject = edsCluster('echo', { loadReporting: true });
    if (metrics) cluster['lrs_report_endpoint_metrics'] = [...metrics];
    env.serve({
      clusters: [cluster],
      endpoints: [
        endpoints('echo', [
          { locality: { region: 'r', zone: 'z-a' }, addresses: env.addresses('a') },
          { locality: { region: 'r', zone: 'z-b' }, addresses: env.addresses('b') },
        ]),
      ],
    });
  }

  /**
   * RPCs until a and b both answered; what each answered, and the reports' sums by zone once
   * every RPC sent (failures too) is counted as finished.
   */
  async function sendAndSum() {
    const { counts, sent } = await sendUntilBothAnswer(env.client());
    return { a: counts.get('a')!, b: counts.get('b')!, sums: await sumsByZone(env.server, sent) };
  }

  it('sums the selected utilizations and named metrics per locality, one count per call that reported them', async () => {
    serve(['cpu_utilization', 'mem_utilization', 'application_utilization', 'named_metrics.queue']);
    const { a, b, sums } = await sendAndSum();
    assert.deepEqual(sums['z-a'], {
      succeeded: a,
      cpu: { count: a, total: 0.5 * a },
      mem: { count: a, total: 0.25 * a },
      application: { count: a, total: 0.75 * a },
      named: { 'named_metrics.queue': { count: a, total: 2 * a } },
    });
    // b sets no memory or application utilization: proto3 cannot tell unset from 0, so each of
    // its reports counts with 0, as a report that says 0 would.
    assert.deepEqual(sums['z-b'], {
      succeeded: b,
      cpu: { count: b, total: 0.125 * b },
      mem: { count: b, total: 0 },
      application: { count: b, total: 0 },
      named: { 'named_metrics.queue': { count: b, total: 3 * b } },
    });
  });

  it('named_metrics.* carries every named metric, under its prefixed name, and no utilization', async () => {
    serve(['named_metrics.*', 'no_such_field']);
    const { a, b, sums } = await sendAndSum();
    assert.deepEqual(sums['z-a'], {
      succeeded: a,
      named: {
        'named_metrics.queue': { count: a, total: 2 * a },
        'named_metrics.other': { count: a, total: a },
      },
    });
    assert.deepEqual(sums['z-b'], {
      succeeded: b,
      named: { 'named_metrics.queue': { count: b, total: 3 * b } },
    });
  });

  it('without lrs_report_endpoint_metrics, load reports carry no backend metrics', async () => {
    serve(undefined);
    const { a, b, sums } = await sendAndSum();
    assert.deepEqual(sums, {
      'z-a': { succeeded: a, named: {} },
      'z-b': { succeeded: b, named: {} },
    });
  });
});
