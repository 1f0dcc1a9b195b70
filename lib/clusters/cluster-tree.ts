// gRFC A37's CDS-policy logic as a watcher over the client: expand an aggregate cluster tree into
// the ordered list of discovery mechanisms (its leaves). See docs/clusters.md.
import { status } from '@grpc/grpc-js';
import type { XdsServerConfig } from '../bootstrap';
import { isXdsError, XdsError } from '../errors';
import type { ResourceWatcher, WatchHandle } from '../client/cache/resource-watcher';
import {
  clusterResourceType,
  type ClusterUpdate,
  type EdsClusterUpdate,
  type LbPolicy,
  type LogicalDnsClusterUpdate,
  type OutlierDetection,
} from '../resources/cluster';
import { SmallMap } from '../small-map';
import { frozenList } from '../frozen-list';
import { logError } from '../trace';
import type { XdsClient } from '../xds-client';

/**
 * The most clusters a path from the root may hold, the root included: a chain of 16 clusters
 * (15 aggregates and a leaf) is accepted, a 17th cluster is an error. A37 names no limit; this
 * is gRPC C-core's `kMaxXdsAggregateClusterRecursionDepth` and grpc-go's
 * `aggregateClusterMaxDepth` (both count the root as depth 0 and fail at depth 16, the 17th
 * cluster: the same limit).
 */
export const MAX_AGGREGATE_CLUSTER_DEPTH = 16;

/** One leaf of the tree: how the cluster resolver discovers its endpoints (A37's proto). */
export interface DiscoveryMechanism {
  readonly cluster: string;
  readonly type: 'EDS' | 'LOGICAL_DNS';
  /** EDS only, when the cluster sets one; the ClusterLoadAssignment name otherwise is `cluster`. */
  readonly edsServiceName?: string;
  /** LOGICAL_DNS only: `host:port`. */
  readonly dnsHostname?: string;
  /** Where to report load; absent: no load reporting. */
  readonly lrsServer?: XdsServerConfig;
  readonly maxConcurrentRequests: number;
  readonly outlierDetection?: OutlierDetection;
  /** The leaf cluster's own policy (gRFC A75: the leaf's, not the aggregate's). */
  readonly lbPolicy?: LbPolicy;
}

/** What `onUpdate` gets: the leaves in priority order and every cluster of the tree. */
export interface ClusterTreeUpdate {
  readonly mechanisms: readonly DiscoveryMechanism[];
  /** Every cluster reached from the root (aggregates too), in depth-first order. */
  readonly clusters: ReadonlyMap<string, ClusterUpdate>;
}

export interface ClusterTreeListener {
  /** The whole tree is known and something in it changed. Never a half-built list. */
  onUpdate(update: ClusterTreeUpdate): void;
  /** A37's TRANSIENT_FAILURE cases; the code is always UNAVAILABLE. */
  onError(error: XdsError): void;
}

export interface ClusterTreeOptions {
  /**
   * gRFC A74: a non-root cluster that does not exist is left out of the tree instead of failing
   * it (C-core's choice). Default false: A37, any missing cluster is an error.
   */
  skipMissingChildren?: boolean;
}

export interface ClusterTreeHandle {
  /** Stops every watch of the tree; no callback runs afterwards. Idempotent. */
  cancel(): void;
}

/** One cluster of the tree: its watch (it is the watcher) and what the watch last said. */
class ClusterEntry implements ResourceWatcher<ClusterUpdate> {
  handle: WatchHandle = NO_WATCH;
  update: ClusterUpdate | undefined = undefined;
  /** The leaf's mechanism, one object per update (unchanged cluster, identical mechanism). */
  mechanism: DiscoveryMechanism | undefined = undefined;
  /** Why there is no update: NOT_FOUND, INVALID_ARGUMENT, or UNAVAILABLE (transient). */
  error: XdsError | undefined = undefined;
  /** A problem around a kept update (NACK, stream down). */
  ambient: XdsError | undefined = undefined;

  constructor(
    private readonly tree: ClusterTree,
    readonly name: string,
  ) {}

  onResourceChanged(update: ClusterUpdate): void {
    if (!this.tree.holds(this)) return;
    this.update = update;
    this.mechanism = update.type === 'AGGREGATE' ? undefined : toMechanism(update);
    this.error = undefined;
    this.ambient = undefined;
    this.tree.schedule();
  }

  onResourceError(error: XdsError): void {
    if (!this.tree.holds(this)) return;
    if (error.code === status.UNAVAILABLE && this.update !== undefined) {
      // Connectivity never costs us a cluster we have (A57); treat it as ambient.
      this.ambient = error;
    } else {
      this.update = undefined;
      this.mechanism = undefined;
      this.error = error;
    }
    this.tree.schedule();
  }

  onAmbientError(error: XdsError): void {
    if (!this.tree.holds(this)) return;
    this.ambient = error;
    this.tree.schedule();
  }
}

const NO_WATCH: WatchHandle = { cancel: () => {} };

type Walk =
  | { kind: 'complete'; mechanisms: DiscoveryMechanism[]; clusters: Map<string, ClusterUpdate> }
  | { kind: 'incomplete'; transient: XdsError | undefined }
  | { kind: 'error'; error: XdsError };

/**
 * Watches the cluster `root` and, recursively, the children of every aggregate cluster in its
 * tree; reports the leaves as discovery mechanisms once every cluster has been received. The
 * listener is only ever called asynchronously.
 */
export function watchClusterTree(
  client: XdsClient,
  root: string,
  listener: ClusterTreeListener,
  options: ClusterTreeOptions = {},
): ClusterTreeHandle {
  return new ClusterTree(client, root, listener, options.skipMissingChildren ?? false);
}

/** The handle is the tree itself (one object fewer per channel). */
class ClusterTree implements ClusterTreeHandle {
  /** A SmallMap: most trees are one cluster. */
  private readonly entries = new SmallMap<string, ClusterEntry>();
  private cancelled = false;
  private detached: (() => void) | undefined = undefined;
  private scheduled = false;
  /** What was last delivered, for change detection: its own copy of the clusters. */
  private delivered:
    | {
        readonly mechanisms: readonly DiscoveryMechanism[];
        readonly clusters: SmallMap<string, ClusterUpdate>;
      }
    | undefined;
  private everDelivered = false;
  private lastError: XdsError | undefined;

  constructor(
    private readonly client: XdsClient,
    private readonly root: string,
    private readonly listener: ClusterTreeListener,
    private readonly skipMissingChildren: boolean,
  ) {
    // A closed client is reported like any other failure: later, through onError.
    if (this.entryFor(root).error) this.schedule();
  }

  /** Made when first asked for: it works taken off the handle, as the handle's closure did. */
  get cancel(): () => void {
    return (this.detached ??= () => this.stop());
  }

  private stop(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    for (const entry of this.entries.values()) entry.handle.cancel();
    this.entries.clear();
  }

  private entryFor(name: string): ClusterEntry {
    const known = this.entries.get(name);
    if (known) return known;
    const entry = new ClusterEntry(this, name);
    this.entries.set(name, entry);
    try {
      entry.handle = this.client.watchCluster(name, entry);
    } catch (e) {
      // The client was closed under us: an error value for the walk, not a crash in a microtask.
      entry.error = isXdsError(e) ? e : new XdsError(status.INTERNAL, String(e), { cause: e });
    }
    return entry;
  }

  /** Whether `entry`'s watch is still one of the tree's (not cancelled, not left behind). */
  holds(entry: ClusterEntry): boolean {
    return !this.cancelled && this.entries.get(entry.name) === entry;
  }

  /** Callbacks of one response arrive back to back: evaluate once, after the last of them. */
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.evaluate();
    });
  }

  private evaluate(): void {
    if (this.cancelled) return;
    const walk = this.walk();
    if (walk.kind === 'error') return this.fail(walk.error, false);
    if (walk.kind === 'incomplete') {
      // A transient problem fails the tree only while it has never worked; after that the
      // last good result stands until the tree is whole again.
      if (walk.transient && !this.everDelivered) this.fail(walk.transient, true);
      return;
    }
    const last = this.delivered;
    if (
      last &&
      sameList(last.mechanisms, walk.mechanisms) &&
      sameMap(last.clusters, walk.clusters)
    ) {
      return;
    }
    const mechanisms = frozenList(walk.mechanisms);
    // The listener gets the walk's Map, change detection a copy (a SmallMap: mostly one
    // cluster): what the listener does to its Map cannot disturb it.
    const clusters = new SmallMap<string, ClusterUpdate>();
    for (const [name, cluster] of walk.clusters) clusters.set(name, cluster);
    this.delivered = { mechanisms, clusters };
    const update: ClusterTreeUpdate = Object.freeze({ mechanisms, clusters: walk.clusters });
    this.everDelivered = true;
    this.lastError = undefined;
    this.call(() => this.listener.onUpdate(update));
  }

  private fail(error: XdsError, transient: boolean): void {
    // After a real failure the next good tree is reported even if it equals the old one.
    if (!transient) this.delivered = undefined;
    const last = this.lastError;
    if (last && last.message === error.message) return;
    this.lastError = error;
    this.call(() => this.listener.onError(error));
  }

  /**
   * One depth-first pass from the root. Starts watches for clusters newly in the tree, cancels
   * those that left it, and returns the outcome as a value (the recursion never throws).
   */
  private walk(): Walk {
    const seen = new Set<string>();
    const mechanisms: DiscoveryMechanism[] = [];
    const clusters = new Map<string, ClusterUpdate>();
    let failure: XdsError | undefined;
    let transient: XdsError | undefined;
    let incomplete = false;
    let cycle: readonly string[] | undefined;

    const visit = (name: string, path: readonly string[]): void => {
      // Checked before the watch is started: a cluster past the limit is never subscribed.
      if (path.length > MAX_AGGREGATE_CLUSTER_DEPTH) {
        failure ??= treeError(
          `${showPath(path)}: aggregate cluster graph exceeds max depth ` +
            `(${MAX_AGGREGATE_CLUSTER_DEPTH})`,
        );
        return;
      }
      if (seen.has(name)) {
        // Its earliest position wins; if it is its own ancestor, this is a cycle.
        if (path.indexOf(name) < path.length - 1) cycle ??= path;
        return;
      }
      seen.add(name);
      const entry = this.entryFor(name);
      const { update, error } = entry;
      if (update === undefined) {
        if (error === undefined) {
          incomplete = true;
        } else if (error.code === status.UNAVAILABLE) {
          incomplete = true;
          transient ??= pathError(path, error);
        } else if (!(
          error.code === status.NOT_FOUND &&
          this.skipMissingChildren &&
          path.length > 1
        )) {
          failure ??= pathError(path, error);
        }
        return;
      }
      if (entry.ambient) transient ??= pathError(path, entry.ambient);
      clusters.set(name, update);
      if (update.type === 'AGGREGATE') {
        for (const child of update.prioritizedClusterNames) visit(child, [...path, child]);
      } else if (entry.mechanism) {
        mechanisms.push(entry.mechanism);
      }
    };
    visit(this.root, [this.root]);

    for (const [name, entry] of this.entries) {
      if (seen.has(name)) continue;
      entry.handle.cancel();
      this.entries.delete(name);
    }
    if (failure) return { kind: 'error', error: failure };
    if (incomplete) return { kind: 'incomplete', transient };
    if (mechanisms.length === 0) {
      // Every leaf was a duplicate, a skipped missing child, or part of a cycle.
      const why = cycle ? ` (cycle: ${showPath(cycle)})` : '';
      const error = treeError(`${this.root}: aggregate cluster graph has no leaf clusters${why}`);
      return { kind: 'error', error };
    }
    return { kind: 'complete', mechanisms, clusters };
  }

  /** A listener that throws must not break the tree or the client's delivery loop. */
  private call(callback: () => void): void {
    if (this.cancelled) return;
    try {
      callback();
    } catch (e) {
      logError(`xds-client: a cluster tree listener threw: ${e instanceof Error ? e.stack : e}`);
    }
  }
}

// Keyed by the client's frozen update, shared by all its watchers: every tree in the process
// that holds an unchanged cluster holds the identical mechanism.
const mechanismCache = new WeakMap<ClusterUpdate, DiscoveryMechanism>();

function toMechanism(update: EdsClusterUpdate | LogicalDnsClusterUpdate): DiscoveryMechanism {
  let mechanism = mechanismCache.get(update);
  if (!mechanism) mechanismCache.set(update, (mechanism = buildMechanism(update)));
  return mechanism;
}

function buildMechanism(update: EdsClusterUpdate | LogicalDnsClusterUpdate): DiscoveryMechanism {
  // Optional keys only when set: exactOptionalPropertyTypes, and deepEqual-friendly output.
  return Object.freeze({
    cluster: update.name,
    type: update.type,
    ...(update.type === 'EDS' && update.edsServiceName !== undefined
      ? { edsServiceName: update.edsServiceName }
      : {}),
    ...(update.type === 'LOGICAL_DNS' ? { dnsHostname: update.dnsHostname } : {}),
    ...(update.lrsServer ? { lrsServer: update.lrsServer } : {}),
    maxConcurrentRequests: update.maxConcurrentRequests,
    ...(update.outlierDetection ? { outlierDetection: update.outlierDetection } : {}),
    lbPolicy: update.lbPolicy,
  });
}

function showPath(path: readonly string[]): string {
  return path.join(' -> ');
}

/** gRFC A54: the data plane sees UNAVAILABLE, never NOT_FOUND or INVALID_ARGUMENT. */
function treeError(message: string, cause?: XdsError, resourceName?: string): XdsError {
  return new XdsError(status.UNAVAILABLE, message, {
    typeUrl: clusterResourceType.typeUrl,
    ...(resourceName === undefined ? {} : { resourceName }),
    ...(cause === undefined ? {} : { cause }),
    // The cause's node id, added once by this error (the reason above embeds its reason).
    ...(cause?.nodeId === undefined ? {} : { nodeId: cause.nodeId }),
  });
}

function pathError(path: readonly string[], error: XdsError): XdsError {
  const name = path[path.length - 1]!;
  const what =
    error.code === status.NOT_FOUND
      ? 'does not exist'
      : error.code === status.INVALID_ARGUMENT
        ? `is invalid: ${error.reason}`
        : error.code === status.UNAVAILABLE
          ? `is unavailable: ${error.reason}`
          : `failed: ${error.reason}`;
  return treeError(`${showPath(path)}: cluster "${name}" ${what}`, error, name);
}

function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function sameMap<K, V>(a: SmallMap<K, V>, b: ReadonlyMap<K, V>): boolean {
  if (a.size !== b.size) return false;
  for (const [key, value] of a) if (b.get(key) !== value) return false;
  return true;
}
