// Load reporting (LRS): what a process counts between two load reports, per cluster and EDS
// service name, and per locality within it; and the ClusterStats each report carries. Counters
// cover one reporting interval and start again at zero once reported; calls in flight are a
// gauge. Drops are counted by category; circuit-breaking drops only in the total (gRFC A32).
// Backend metrics (ORCA per-call reports, as the cluster selects them: gRFC A64, A85) are summed
// per locality, each with the number of calls that reported it.

import { durationOfMs } from '../../duration';
import type {
  ClusterStats,
  EndpointLoadMetricStats,
  UnnamedEndpointLoadMetricStats,
  UpstreamLocalityStats,
} from '../../generated/protos';

/** A locality as EDS names it; load of endpoints without one goes to the empty locality. */
export interface LoadLocality {
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
}

/**
 * What one finished call's backend reported, already cut down to what the cluster's
 * lrs_report_endpoint_metrics selects; metric names as load reports carry them
 * (`named_metrics.<key>`).
 */
export interface BackendMetrics {
  readonly cpuUtilization?: number;
  readonly memUtilization?: number;
  readonly applicationUtilization?: number;
  readonly named: readonly (readonly [name: string, value: number])[];
}

/** A sum over the calls that reported one metric. */
interface MetricSum {
  count: number;
  total: number;
}

const EMPTY_LOCALITY: LoadLocality = Object.freeze({ region: '', zone: '', subZone: '' });

/** The calls through one locality of one cluster. */
export class LocalityLoad {
  private issued = 0;
  private succeeded = 0;
  private errored = 0;
  private inProgress = 0;
  private cpu: MetricSum | undefined;
  private mem: MetricSum | undefined;
  private application: MetricSum | undefined;
  private readonly named = new Map<string, MetricSum>();
  /** False once the cluster forgot this entry (a whole interval idle); a new call brings it back. */
  attached = true;
  /** Set when this entry came back to find another in its place: that one counts instead. */
  private forward: LocalityLoad | undefined;

  constructor(
    private readonly owner: ClusterLoad,
    readonly key: string,
    readonly locality: LoadLocality,
  ) {}

  /** A call went out to an endpoint of this locality. */
  callStarted(): void {
    if (!this.attached) this.owner.reattach(this);
    if (this.forward) return this.forward.callStarted();
    this.issued++;
    this.inProgress++;
  }

  /** A started call is over: OK counts as succeeded, any other status as errored. */
  callFinished(ok: boolean): void {
    if (this.forward) return this.forward.callFinished(ok);
    if (ok) this.succeeded++;
    else this.errored++;
    if (this.inProgress > 0) this.inProgress--;
  }

  /** The backend metrics of a call that finished (reported with, or before, callFinished). */
  recordBackendMetrics(metrics: BackendMetrics): void {
    if (this.forward) return this.forward.recordBackendMetrics(metrics);
    const { cpuUtilization, memUtilization, applicationUtilization } = metrics;
    if (cpuUtilization !== undefined) this.cpu = add(this.cpu, cpuUtilization);
    if (memUtilization !== undefined) this.mem = add(this.mem, memUtilization);
    if (applicationUtilization !== undefined) {
      this.application = add(this.application, applicationUtilization);
    }
    for (const [name, value] of metrics.named) {
      const sum = this.named.get(name);
      if (sum) add(sum, value);
      else this.named.set(name, { count: 1, total: value });
    }
  }

  /** @internal Only for an entry with nothing in flight (it was forgotten idle). */
  forwardTo(current: LocalityLoad): void {
    this.forward = current;
  }

  get idle(): boolean {
    return this.issued === 0 && this.succeeded === 0 && this.errored === 0 && this.inProgress === 0;
  }

  /** The interval's counts (undefined when there is nothing to say), and a fresh interval. */
  take(): UpstreamLocalityStats | undefined {
    if (this.idle) return undefined;
    const stats: UpstreamLocalityStats = {
      locality: { ...this.locality },
      totalSuccessfulRequests: this.succeeded,
      totalRequestsInProgress: this.inProgress,
      totalErrorRequests: this.errored,
      totalIssuedRequests: this.issued,
      priority: 0,
      loadMetricStats: [...this.named].map(([metricName, sum]) => named(metricName, sum)),
      cpuUtilization: unnamed(this.cpu),
      memUtilization: unnamed(this.mem),
      applicationUtilization: unnamed(this.application),
    };
    this.issued = this.succeeded = this.errored = 0;
    this.cpu = this.mem = this.application = undefined;
    this.named.clear();
    return stats;
  }
}

/** The load of one {cluster, EDS service name}, as one LRS server gets it. */
export class ClusterLoad {
  /** Holders (cluster_impl policies); an unheld, idle entry is forgotten at the next report. */
  users = 0;
  private readonly localities = new Map<string, LocalityLoad>();
  private readonly drops = new Map<string, number>();
  private uncategorizedDrops = 0;
  private intervalStart: number;

  constructor(
    readonly cluster: string,
    readonly edsServiceName: string | undefined,
    now: number,
  ) {
    this.intervalStart = now;
  }

  /** The counters of `locality` (undefined: the empty locality, as logical DNS endpoints have). */
  locality(locality: LoadLocality | undefined): LocalityLoad {
    const l = locality ?? EMPTY_LOCALITY;
    const key = localityKey(l);
    let entry = this.localities.get(key);
    if (!entry) {
      entry = new LocalityLoad(this, key, Object.freeze({ ...l }));
      this.localities.set(key, entry);
    }
    return entry;
  }

  /** An RPC dropped by the `category` of the endpoints' drop_overloads. */
  dropped(category: string): void {
    this.drops.set(category, (this.drops.get(category) ?? 0) + 1);
  }

  /** An RPC dropped by circuit breaking: counted in the total only. */
  droppedUncategorized(): void {
    this.uncategorizedDrops++;
  }

  /** Called by a forgotten locality that is used again. */
  reattach(entry: LocalityLoad): void {
    entry.attached = true;
    const current = this.localities.get(entry.key);
    if (current === undefined) this.localities.set(entry.key, entry);
    else if (current !== entry) entry.forwardTo(current);
  }

  /** Nothing counted since the last report and nothing in flight. */
  get idle(): boolean {
    if (this.drops.size > 0 || this.uncategorizedDrops > 0) return false;
    for (const entry of this.localities.values()) if (!entry.idle) return false;
    return true;
  }

  /**
   * The ClusterStats of the interval that ends at `now` (undefined when there is nothing to
   * say), and a new interval. Localities idle over the interval are forgotten.
   */
  take(now: number): ClusterStats | undefined {
    const intervalMs = Math.max(0, now - this.intervalStart);
    this.intervalStart = now;
    const upstreamLocalityStats: UpstreamLocalityStats[] = [];
    for (const [key, entry] of this.localities) {
      const stats = entry.take();
      if (stats) upstreamLocalityStats.push(stats);
      else {
        entry.attached = false;
        this.localities.delete(key);
      }
    }
    const droppedRequests = [...this.drops].map(([category, droppedCount]) => ({
      category,
      droppedCount,
    }));
    let totalDroppedRequests = this.uncategorizedDrops;
    for (const d of droppedRequests) totalDroppedRequests += d.droppedCount;
    this.drops.clear();
    this.uncategorizedDrops = 0;
    if (upstreamLocalityStats.length === 0 && totalDroppedRequests === 0) return undefined;
    return {
      clusterName: this.cluster,
      clusterServiceName: this.edsServiceName ?? '',
      upstreamLocalityStats,
      totalDroppedRequests,
      droppedRequests,
      loadReportInterval: durationOfMs(intervalMs),
    };
  }
}

/** Every ClusterLoad reported to one LRS server. */
export class LoadStore {
  private readonly clusters = new Map<string, ClusterLoad>();

  constructor(private readonly now: () => number) {}

  /** The entry of {cluster, EDS service name}, created on first use; counts a user. */
  acquire(cluster: string, edsServiceName: string | undefined): ClusterLoad {
    const key = JSON.stringify([cluster, edsServiceName ?? null]);
    let load = this.clusters.get(key);
    if (!load) {
      load = new ClusterLoad(cluster, edsServiceName, this.now());
      this.clusters.set(key, load);
    }
    load.users++;
    return load;
  }

  /** Gives back a user; the entry stays until what it counted has been reported. */
  release(load: ClusterLoad): void {
    if (load.users > 0) load.users--;
  }

  /**
   * One report: the ClusterStats of the clusters `wanted` names (by cluster name; 'all' for
   * every cluster) that have something to say. Their counters start again at zero; entries
   * nobody holds any more and that have nothing left to say are forgotten.
   */
  report(wanted: ReadonlySet<string> | 'all'): ClusterStats[] {
    const now = this.now();
    const out: ClusterStats[] = [];
    for (const [key, load] of this.clusters) {
      if (wanted === 'all' || wanted.has(load.cluster)) {
        const stats = load.take(now);
        if (stats) out.push(stats);
      }
      if (load.users === 0 && load.idle) this.clusters.delete(key);
    }
    return out;
  }

  get size(): number {
    return this.clusters.size;
  }
}

function add(sum: MetricSum | undefined, value: number): MetricSum {
  if (!sum) return { count: 1, total: value };
  sum.count++;
  sum.total += value;
  return sum;
}

function named(metricName: string, sum: MetricSum): EndpointLoadMetricStats {
  return {
    metricName,
    numRequestsFinishedWithMetric: sum.count,
    totalMetricValue: sum.total,
  };
}

function unnamed(sum: MetricSum | undefined): UnnamedEndpointLoadMetricStats | null {
  return sum ? { numRequestsFinishedWithMetric: sum.count, totalMetricValue: sum.total } : null;
}

function localityKey(l: LoadLocality): string {
  return JSON.stringify([l.region, l.zone, l.subZone]);
}
