// The management server's LoadReportingService (LRS, envoy.service.load_stats.v3): it answers
// each stream's first request with what the test wants reported (clusters or all of them, and
// the interval), sends the same to every open stream when the test changes it, and records
// every LoadStatsRequest as a plain frozen object.
import { status, type ServerDuplexStream, type ServiceDefinition } from '@grpc/grpc-js';
import { bidiMethod } from './grpc-method';
import type {
  ClusterStats,
  Int64,
  LoadStatsRequest,
  LoadStatsResponse,
  UnnamedEndpointLoadMetricStats,
  UpstreamLocalityStats,
} from '../generated/protos';
import {
  recordMetadata,
  recordNode,
  type RecordedNode,
  type RecordedStream,
  type Waiters,
  type WaitOptions,
} from './recorder';

export const LRS_METHOD_PATH = '/envoy.service.load_stats.v3.LoadReportingService/StreamLoadStats';

/** What the server asks its LRS clients to report. */
export interface LoadReportingSettings {
  /** Report these clusters (by cluster name). Ignored with `sendAllClusters`. */
  clusters?: readonly string[];
  /** Report every cluster the client has load for (default true when `clusters` is not given). */
  sendAllClusters?: boolean;
  /** `load_reporting_interval`, in ms (default 1000). */
  intervalMs?: number;
}

/** One LoadStatsRequest the server received. */
export interface RecordedLoadReport {
  /** LRS streams are numbered 1, 2, ... in the order they were opened (apart from ADS ones). */
  readonly streamId: number;
  /** On a stream's first request only (that is what clients send). */
  readonly node?: RecordedNode;
  readonly clusterStats: readonly RecordedClusterStats[];
  /** `Date.now()` when it arrived. */
  readonly receivedAt: number;
}

export interface RecordedClusterStats {
  readonly clusterName: string;
  /** The EDS service name; '' when the cluster has none. */
  readonly clusterServiceName: string;
  readonly upstreamLocalityStats: readonly RecordedLocalityStats[];
  /** Every drop: by category and by circuit breaking. */
  readonly totalDroppedRequests: number;
  readonly droppedRequests: readonly {
    readonly category: string;
    readonly droppedCount: number;
  }[];
  /** The interval the client measured for these counts. */
  readonly loadReportIntervalMs: number;
}

export interface RecordedLocalityStats {
  readonly locality: { readonly region: string; readonly zone: string; readonly subZone: string };
  readonly totalIssuedRequests: number;
  readonly totalSuccessfulRequests: number;
  readonly totalErrorRequests: number;
  /** A gauge: RPCs in flight when the report was taken. */
  readonly totalRequestsInProgress: number;
  readonly priority: number;
  /** Backend metrics (gRFC A64, A85), by `metric_name`; absent when the report has none. */
  readonly loadMetricStats?: readonly RecordedMetricStats[];
  /** The ORCA utilizations (gRFC A85); each absent when the report does not carry it. */
  readonly cpuUtilization?: RecordedUnnamedMetricStats;
  readonly memUtilization?: RecordedUnnamedMetricStats;
  readonly applicationUtilization?: RecordedUnnamedMetricStats;
}

/** The sum of one backend metric over the calls that reported it in the interval. */
export interface RecordedUnnamedMetricStats {
  readonly numRequestsFinishedWithMetric: number;
  readonly totalMetricValue: number;
}

export interface RecordedMetricStats extends RecordedUnnamedMetricStats {
  readonly metricName: string;
}

export interface WaitForLoadReportOptions extends WaitOptions {
  /** Consider only reports at this index of `loadReports` or later. */
  after?: number;
}

type LrsCall = ServerDuplexStream<LoadStatsRequest, LoadStatsResponse>;

const LRS_METHOD = bidiMethod(
  LRS_METHOD_PATH,
  'envoy.service.load_stats.v3.LoadStatsRequest',
  'envoy.service.load_stats.v3.LoadStatsResponse',
);
export const LRS_SERVICE: ServiceDefinition = { StreamLoadStats: LRS_METHOD };

const DEFAULT_INTERVAL_MS = 1000;

interface LrsSession {
  readonly id: number;
  readonly call: LrsCall;
  open: boolean;
  /** The client's first request arrived: it gets every change of the settings. */
  greeted: boolean;
}

/** The LRS side of one ManagementServer. */
export class LrsService {
  readonly reports: RecordedLoadReport[] = [];
  /** Every stream opened, with its metadata. */
  readonly streams: RecordedStream[] = [];
  private readonly sessions = new Set<LrsSession>();
  private settings: LoadReportingSettings = {};
  private opened = 0;
  private closed = false;

  constructor(private readonly waiters: Waiters) {}

  get streamCount(): number {
    let open = 0;
    for (const session of this.sessions) if (session.open && !session.call.cancelled) open++;
    return open;
  }

  get streamsOpened(): number {
    return this.opened;
  }

  set(settings: LoadReportingSettings): void {
    const { clusters, sendAllClusters, intervalMs } = settings;
    if (intervalMs !== undefined && !(Number.isFinite(intervalMs) && intervalMs >= 0)) {
      throw new Error(`setLoadReporting: intervalMs must be a number >= 0, got ${intervalMs}`);
    }
    this.settings = {
      ...(clusters === undefined ? {} : { clusters: [...clusters] }),
      ...(sendAllClusters === undefined ? {} : { sendAllClusters }),
      ...(intervalMs === undefined ? {} : { intervalMs }),
    };
    for (const session of this.sessions) if (session.greeted) this.respond(session);
  }

  onStream(call: LrsCall): void {
    const session: LrsSession = { id: ++this.opened, call, open: true, greeted: false };
    this.streams.push({
      id: session.id,
      method: call.getPath(),
      metadata: recordMetadata(call.metadata),
    });
    if (this.closed) {
      this.end(session, status.UNAVAILABLE, 'management server closed');
      return;
    }
    this.sessions.add(session);
    const detach = () => {
      session.open = false;
      this.sessions.delete(session);
      this.waiters.notify();
    };
    call.on('data', (request: LoadStatsRequest) => this.onRequest(session, request));
    call.on('end', () => this.end(session, status.OK, ''));
    call.on('finish', detach);
    call.on('cancelled', detach);
    call.on('close', detach);
    call.on('error', () => {});
    this.waiters.notify();
  }

  /** Ends every open stream with this status. */
  endStreams(code: status, details: string): void {
    for (const session of this.sessions) this.end(session, code, details);
  }

  close(): void {
    this.closed = true;
    this.endStreams(status.UNAVAILABLE, 'management server closed');
  }

  private onRequest(session: LrsSession, request: LoadStatsRequest): void {
    this.reports.push(recordReport(session.id, request));
    if (!session.greeted && session.open) {
      session.greeted = true;
      this.respond(session);
    }
    this.waiters.notify();
  }

  private respond(session: LrsSession): void {
    if (!session.open || session.call.cancelled) return;
    const { clusters, sendAllClusters, intervalMs = DEFAULT_INTERVAL_MS } = this.settings;
    const all = sendAllClusters ?? clusters === undefined;
    const seconds = Math.floor(intervalMs / 1000);
    session.call.write({
      clusters: all ? [] : [...(clusters ?? [])],
      sendAllClusters: all,
      loadReportingInterval: { seconds, nanos: Math.round((intervalMs - seconds * 1000) * 1e6) },
      reportEndpointGranularity: false,
    });
  }

  private end(session: LrsSession, code: status, details: string): void {
    if (!session.open) return;
    session.open = false;
    if (code === status.OK) session.call.end();
    else session.call.emit('error', Object.assign(new Error(details), { code, details }));
  }
}

function num(value: Int64): number {
  return typeof value === 'number' ? value : value.toNumber();
}

function recordReport(streamId: number, request: LoadStatsRequest): RecordedLoadReport {
  const report: { -readonly [K in keyof RecordedLoadReport]: RecordedLoadReport[K] } = {
    streamId,
    clusterStats: Object.freeze(request.clusterStats.map(recordClusterStats)),
    receivedAt: Date.now(),
  };
  if (request.node) report.node = recordNode(request.node);
  return Object.freeze(report);
}

function recordClusterStats(stats: ClusterStats): RecordedClusterStats {
  const interval = stats.loadReportInterval;
  return Object.freeze({
    clusterName: stats.clusterName,
    clusterServiceName: stats.clusterServiceName,
    upstreamLocalityStats: Object.freeze(stats.upstreamLocalityStats.map(recordLocalityStats)),
    totalDroppedRequests: num(stats.totalDroppedRequests),
    droppedRequests: Object.freeze(
      stats.droppedRequests.map((d) =>
        Object.freeze({ category: d.category, droppedCount: num(d.droppedCount) }),
      ),
    ),
    loadReportIntervalMs: interval ? num(interval.seconds) * 1000 + interval.nanos / 1e6 : 0,
  });
}

function recordLocalityStats(stats: UpstreamLocalityStats): RecordedLocalityStats {
  const { region = '', zone = '', subZone = '' } = stats.locality ?? {};
  const named = stats.loadMetricStats;
  return Object.freeze({
    locality: Object.freeze({ region, zone, subZone }),
    totalIssuedRequests: num(stats.totalIssuedRequests),
    totalSuccessfulRequests: num(stats.totalSuccessfulRequests),
    totalErrorRequests: num(stats.totalErrorRequests),
    totalRequestsInProgress: num(stats.totalRequestsInProgress),
    priority: stats.priority,
    ...(named.length > 0
      ? {
          loadMetricStats: Object.freeze(
            named.map((m) => Object.freeze({ metricName: m.metricName, ...recordSum(m) })),
          ),
        }
      : {}),
    ...(stats.cpuUtilization ? { cpuUtilization: recordSum(stats.cpuUtilization) } : {}),
    ...(stats.memUtilization ? { memUtilization: recordSum(stats.memUtilization) } : {}),
    ...(stats.applicationUtilization
      ? { applicationUtilization: recordSum(stats.applicationUtilization) }
      : {}),
  });
}

function recordSum(stats: UnnamedEndpointLoadMetricStats): RecordedUnnamedMetricStats {
  return Object.freeze({
    numRequestsFinishedWithMetric: num(stats.numRequestsFinishedWithMetric),
    totalMetricValue: stats.totalMetricValue,
  });
}

/** waitForLoadReport's search: each report is offered to `predicate` once, in order. */
export function reportProbe(
  reports: readonly RecordedLoadReport[],
  predicate: (report: RecordedLoadReport) => boolean,
  after: number,
): () => RecordedLoadReport | undefined {
  let next = Math.max(0, after);
  return () => {
    for (; next < reports.length; next++) {
      const report = reports[next];
      if (report !== undefined && predicate(report)) {
        next++;
        return report;
      }
    }
    return undefined;
  };
}

export function reportTimeoutMessage(
  reports: readonly RecordedLoadReport[],
  after: number,
  timeoutMs: number,
): string {
  const recent = reports.slice(Math.max(after, reports.length - 4));
  const lines = recent.map((r) => `  ${JSON.stringify(r)}`);
  const seen =
    lines.length === 0
      ? `no load report was received (LRS streams ended or never opened?)`
      : `the last ${lines.length} of ${reports.length} reports:\n${lines.join('\n')}`;
  return `waitForLoadReport: no matching report within ${timeoutMs} ms; ${seen}`;
}
