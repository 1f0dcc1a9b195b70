// gRFC A37's xds_cluster_resolver: discovery mechanisms (EDS and logical DNS) in, an ordered
// list of named priorities of localities of endpoints out. See docs/clusters.md.
import { status } from '@grpc/grpc-js';
import type { XdsServerConfig } from '../bootstrap';
import { XdsError } from '../errors';
import type { DropOverload, LocalityEndpoints } from '../resources/endpoint/update';
import { SmallMap } from '../small-map';
import { frozenList } from '../frozen-list';
import { logError } from '../trace';
import type { XdsClient } from '../xds-client';
import type { DiscoveryMechanism } from './cluster-tree';
import type { Discovery, DiscoveryResult } from './discovery';
import { EdsDiscovery } from './eds-discovery';
import type { DnsResolver } from './logical-dns';
import { PriorityNamer } from './priority-names';

// Loaded with the first LOGICAL_DNS mechanism: most clusters are EDS (decision 0095).
const logicalDns = (): typeof import('./logical-dns') =>
  require('./logical-dns') as typeof import('./logical-dns');

/** How often a logical DNS name is resolved again when nobody asks. */
export const DEFAULT_DNS_REFRESH_INTERVAL_MS = 30_000;

/** One child of the priority LB policy, highest priority first in the list. */
export interface Priority {
  /** `<cluster>[child<N>]`, stable across updates (see docs/clusters.md). */
  readonly name: string;
  readonly cluster: string;
  /** EDS priorities: round_robin. Logical DNS: pick_first (A37). */
  readonly childPolicy: 'round_robin' | 'pick_first';
  /** True for EDS: reconnecting EDS children must not churn a connected DNS child (A37). */
  readonly ignoreReresolutionRequests: boolean;
  /** Empty when the mechanism failed: the priority fails and the policy moves on. */
  readonly localities: readonly LocalityEndpoints[];
  readonly dropCategories: readonly DropOverload[];
  readonly maxConcurrentRequests: number;
  readonly edsServiceName?: string;
  readonly lrsServer?: XdsServerConfig;
}

export interface ClusterResolverListener {
  /** Every mechanism has a result or an error: the priorities, in mechanism order. */
  onUpdate(priorities: readonly Priority[]): void;
  /** After an `onUpdate` in which every mechanism failed: why there are no endpoints. */
  onError(error: XdsError): void;
}

export interface ClusterResolverOptions {
  /** Default: Node's `dns.promises.lookup(host, {all: true})`. */
  dnsResolver?: DnsResolver;
  /** Default 30 000 ms. */
  dnsRefreshIntervalMs?: number;
}

/** A running discovery and the mechanism it serves. */
interface RunningDiscovery {
  readonly key: string;
  mechanism: DiscoveryMechanism;
  readonly discovery: Discovery;
}

/**
 * Resolves discovery mechanisms into priorities. EDS mechanisms watch their
 * ClusterLoadAssignment through the client; logical DNS ones resolve `host:port`. The listener
 * is only ever called asynchronously.
 */
export class ClusterResolver {
  private discoveries: RunningDiscovery[] = [];
  /** A SmallMap: a channel's resolver serves one leaf cluster. */
  private readonly namers = new SmallMap<string, PriorityNamer>();
  /** The option; undefined for Node's resolver, taken when a DNS mechanism first needs it. */
  private readonly dnsResolver: DnsResolver | undefined;
  private readonly dnsRefreshIntervalMs: number;
  private scheduled = false;
  private closed = false;
  private lastError: string | undefined;

  constructor(
    private readonly client: XdsClient,
    mechanisms: readonly DiscoveryMechanism[],
    private readonly listener: ClusterResolverListener,
    options: ClusterResolverOptions = {},
  ) {
    this.dnsResolver = options.dnsResolver;
    this.dnsRefreshIntervalMs = options.dnsRefreshIntervalMs ?? DEFAULT_DNS_REFRESH_INTERVAL_MS;
    if (!(this.dnsRefreshIntervalMs > 0)) {
      throw new XdsError(status.INVALID_ARGUMENT, 'dnsRefreshIntervalMs: must be greater than 0');
    }
    this.updateMechanisms(mechanisms);
  }

  /**
   * Replaces the mechanism list. A mechanism that discovers the same thing as before (same
   * cluster, type and EDS service name or DNS name) keeps its watch, its result and its
   * priority names; the others start afresh.
   */
  updateMechanisms(mechanisms: readonly DiscoveryMechanism[]): void {
    if (this.closed) return;
    const old = [...this.discoveries];
    let changed = old.length !== mechanisms.length;
    const next = mechanisms.map((mechanism, i) => {
      const key = discoveryKey(mechanism);
      const index = old.findIndex((d) => d.key === key);
      if (index < 0) {
        changed = true;
        return this.startDiscovery(mechanism, key);
      }
      const [reused] = old.splice(index, 1);
      if (reused!.mechanism !== mechanism || this.discoveries[i] !== reused) changed = true;
      reused!.mechanism = mechanism;
      return reused!;
    });
    for (const stale of old) stale.discovery.close();
    this.discoveries = next;
    for (const cluster of this.namers.keys()) {
      if (!mechanisms.some((m) => m.cluster === cluster)) this.namers.delete(cluster);
    }
    if (changed) this.schedule();
  }

  /** Resolves every logical DNS mechanism again (EDS ignores it: the server pushes). */
  requestReresolution(): void {
    for (const { discovery } of this.discoveries) discovery.resolveNow();
  }

  /** Stops every watch, resolution and timer; the listener is not called again. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const { discovery } of this.discoveries) discovery.close();
    this.discoveries = [];
  }

  private startDiscovery(mechanism: DiscoveryMechanism, key: string): RunningDiscovery {
    const onResult = () => this.schedule();
    if (mechanism.type !== 'LOGICAL_DNS') {
      return { key, mechanism, discovery: new EdsDiscovery(this.client, mechanism, onResult) };
    }
    const { LogicalDnsDiscovery, defaultDnsResolver } = logicalDns();
    const discovery = new LogicalDnsDiscovery(
      mechanism.cluster,
      mechanism.dnsHostname ?? '',
      this.dnsResolver ?? defaultDnsResolver,
      this.dnsRefreshIntervalMs,
      onResult,
    );
    return { key, mechanism, discovery };
  }

  /** Results of one response (or one tick) are reported together, once. */
  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.emit();
    });
  }

  private emit(): void {
    if (this.closed) return;
    const results = this.discoveries.map((d) => d.discovery.result);
    if (results.some((r) => r.kind === 'pending')) return;
    const used = new Set<string>();
    const priorities: Priority[] = [];
    const errors: string[] = [];
    let nodeId: string | undefined;
    this.discoveries.forEach(({ mechanism }, i) => {
      const result = results[i]!;
      // A failed mechanism, or one with no usable locality, still takes one (empty) priority
      // so that the priority policy fails over past it instead of waiting.
      const groups = result.kind === 'ok' && result.priorities.length ? result.priorities : [[]];
      if (result.kind === 'error') {
        errors.push(result.error.reason);
        nodeId ??= result.error.nodeId;
      }
      let namer = this.namers.get(mechanism.cluster);
      if (!namer)
        this.namers.set(mechanism.cluster, (namer = new PriorityNamer(mechanism.cluster)));
      const names = namer.assign(groups, used);
      groups.forEach((localities, p) => {
        priorities.push(makePriority(names[p]!, mechanism, localities, result));
      });
    });
    // The channel keeps it: frozen at its length.
    const frozen = frozenList(priorities);
    this.call(() => this.listener.onUpdate(frozen));
    const message =
      errors.length && errors.length === results.length ? errors.join('; ') : undefined;
    if (message !== undefined && message !== this.lastError) {
      const error = new XdsError(status.UNAVAILABLE, `no endpoints: ${message}`, {
        ...(nodeId === undefined ? {} : { nodeId }),
      });
      this.call(() => this.listener.onError(error));
    }
    this.lastError = message;
  }

  private call(callback: () => void): void {
    if (this.closed) return;
    try {
      callback();
    } catch (e) {
      logError(
        `xds-client: a cluster resolver listener threw: ${e instanceof Error ? e.stack : e}`,
      );
    }
  }
}

function discoveryKey(mechanism: DiscoveryMechanism): string {
  const what =
    mechanism.type === 'EDS'
      ? (mechanism.edsServiceName ?? mechanism.cluster)
      : (mechanism.dnsHostname ?? '');
  return JSON.stringify([mechanism.type, mechanism.cluster, what]);
}

function makePriority(
  name: string,
  mechanism: DiscoveryMechanism,
  localities: readonly LocalityEndpoints[],
  result: DiscoveryResult,
): Priority {
  const eds = mechanism.type === 'EDS';
  return Object.freeze({
    name,
    cluster: mechanism.cluster,
    childPolicy: eds ? 'round_robin' : 'pick_first',
    ignoreReresolutionRequests: eds,
    localities,
    dropCategories: result.kind === 'ok' && result.drops ? result.drops : NO_DROPS,
    maxConcurrentRequests: mechanism.maxConcurrentRequests,
    ...(mechanism.edsServiceName === undefined ? {} : { edsServiceName: mechanism.edsServiceName }),
    ...(mechanism.lrsServer === undefined ? {} : { lrsServer: mechanism.lrsServer }),
  });
}

const NO_DROPS: readonly DropOverload[] = Object.freeze([]);
