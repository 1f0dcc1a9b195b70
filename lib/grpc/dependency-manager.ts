// gRFC A74's dependency manager: every watch a channel's configuration needs — its Listener,
// RouteConfiguration, the clusters its routes name (and those in-flight RPCs still use), their
// aggregate trees and each leaf's endpoints — and one complete XdsConfig at a time out of them.
// A configuration is handed on only when every part of it is known: never a half-built one.

import { status } from '@grpc/grpc-js';
import {
  ClusterResolver,
  watchClusterTree,
  type ClusterResolverListener,
  type ClusterResolverOptions,
  type ClusterTreeHandle,
  type ClusterTreeListener,
  type ClusterTreeUpdate,
  type DiscoveryMechanism,
  type DnsResolver,
  type Priority,
} from '../clusters';
import { errorReason, isXdsError, XdsError } from '../errors';
import type { ListenerUpdate } from '../resources/listener';
import {
  findVirtualHost,
  type RouteConfigUpdate,
  type VirtualHost,
} from '../resources/route-config';
import { SmallMap } from '../small-map';
import { logError } from '../trace';
import type { XdsClient } from '../xds-client';
import {
  ListenerRoutesWatch,
  type ListenerRoutesListener,
  type RouteResult,
} from './listener-routes';
import type { ClusterResult, XdsConfig } from './xds-config';

export interface DependencyListener {
  /** A complete configuration; replaces the previous one. */
  onConfig(config: XdsConfig): void;
  /**
   * The channel cannot route at all: its Listener or RouteConfiguration does not exist or is
   * invalid with nothing cached, or no virtual host matches. The code is UNAVAILABLE.
   */
  onError(error: XdsError): void;
}

export interface DependencyManagerOptions {
  readonly dnsResolver?: DnsResolver;
}

/**
 * A cluster named by a route or held by a subscription, and its aggregate tree (whose listener
 * it is).
 */
class RootState implements ClusterTreeListener {
  readonly handle: ClusterTreeHandle;
  result: { readonly update: ClusterTreeUpdate } | { readonly error: XdsError } | undefined =
    undefined;

  constructor(
    private readonly manager: DependencyManager,
    client: XdsClient,
    name: string,
  ) {
    this.handle = watchClusterTree(client, name, this);
  }

  onUpdate(update: ClusterTreeUpdate): void {
    this.result = { update };
    this.manager.schedule();
  }

  onError(error: XdsError): void {
    this.result = { error };
    this.manager.schedule();
  }
}

/** An EDS or logical DNS cluster reached from some root, and its endpoints (its resolver's listener). */
class LeafState implements ClusterResolverListener {
  readonly resolver: ClusterResolver;
  priorities: readonly Priority[] | undefined = undefined;
  note: string | undefined = undefined;

  constructor(
    private readonly manager: DependencyManager,
    client: XdsClient,
    public mechanism: DiscoveryMechanism,
    options: ClusterResolverOptions,
  ) {
    this.resolver = new ClusterResolver(client, [mechanism], this, options);
  }

  onUpdate(priorities: readonly Priority[]): void {
    this.priorities = priorities;
    this.note = undefined;
    this.manager.schedule();
  }

  onError(error: XdsError): void {
    this.note = error.reason;
    this.manager.schedule();
  }
}

/** It is its ListenerRoutesWatch's listener (`onChanged`, `onError`). */
export class DependencyManager implements ListenerRoutesListener {
  private readonly listenerRoutes: ListenerRoutesWatch;
  private listener: ListenerUpdate | undefined;
  private routeConfig: RouteConfigUpdate | undefined;
  /** Resource errors that leave the channel unable to route, until the resource comes back. */
  private listenerError: XdsError | undefined;
  private routeError: XdsError | undefined;
  /** The last error reported, so that one cause is reported once. */
  private reportedFatal: string | undefined;
  // SmallMaps: a channel's roots, leaves and subscriptions are mostly one cluster each.
  private readonly roots = new SmallMap<string, RootState>();
  private readonly leaves = new SmallMap<string, LeafState>();
  private readonly subscriptions = new SmallMap<string, number>();
  /** The clusters the current virtual host's routes name. */
  private routeNames: readonly string[] = [];
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly client: XdsClient,
    listenerName: string,
    /**
     * The channel's data-plane authority (its `:authority`: `grpc.default_authority`, else the
     * target's path), which virtual hosts are matched against; not the target's xDS authority.
     */
    private readonly dataPlaneAuthority: string,
    private readonly out: DependencyListener,
    private readonly options: DependencyManagerOptions = {},
  ) {
    this.listenerRoutes = new ListenerRoutesWatch(
      client,
      listenerName,
      // A server-side Listener (gRFC A36) validates, but a channel cannot use it.
      (listener) => (listener.server ? `Listener ${listenerName} has no api_listener` : undefined),
      this,
    );
  }

  /**
   * Keeps `cluster` in the configuration, whatever the routes say, until the returned function
   * is called (gRFC A31: a cluster stays while RPCs that picked it are in flight).
   */
  addClusterSubscription(cluster: string): () => void {
    this.subscriptions.set(cluster, (this.subscriptions.get(cluster) ?? 0) + 1);
    // A cluster already wanted changes nothing: no new configuration for it.
    if (!this.roots.has(cluster)) this.schedule();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.subscriptions.get(cluster) ?? 1) - 1;
      if (left > 0) {
        this.subscriptions.set(cluster, left);
        return;
      }
      this.subscriptions.delete(cluster);
      if (!this.routeNames.includes(cluster)) this.schedule();
    };
  }

  /** Resolves every logical DNS cluster again (a pick_first child asked for it). */
  requestReresolution(): void {
    for (const leaf of this.leaves.values()) leaf.resolver.requestReresolution();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.listenerRoutes.close();
    for (const root of this.roots.values()) root.handle.cancel();
    for (const leaf of this.leaves.values()) leaf.resolver.close();
    this.roots.clear();
    this.leaves.clear();
  }

  // ---- Listener and RouteConfiguration ----

  /** The Listener and its routes (inline, or what RDS said of them). */
  onChanged(listener: ListenerUpdate, routes: ReadonlyMap<string, RouteResult>): void {
    this.listener = listener;
    this.listenerError = undefined;
    const hcm = listener.httpConnectionManager;
    const result =
      hcm.routeConfigName === undefined ? hcm.routeConfig : routes.get(hcm.routeConfigName);
    if (isXdsError(result)) {
      this.routeConfig = undefined;
      this.routeError = this.forRpcs(result);
    } else {
      this.routeConfig = result;
      this.routeError = undefined;
    }
    this.schedule();
  }

  /** The Listener is gone, invalid with nothing cached, or a server's. */
  onError(error: XdsError): void {
    this.listener = undefined;
    this.listenerError = this.forRpcs(error);
    this.routeConfig = undefined;
    this.routeError = undefined;
    this.schedule();
  }

  /**
   * An error as the channel's RPCs see it (gRFC A54): UNAVAILABLE, whatever the resource's
   * problem was, and naming the node.
   */
  private forRpcs(error: XdsError): XdsError {
    if (error.code === status.UNAVAILABLE && error.nodeId !== undefined) return error;
    return new XdsError(status.UNAVAILABLE, error.reason, {
      ...(error.typeUrl === undefined ? {} : { typeUrl: error.typeUrl }),
      ...(error.resourceName === undefined ? {} : { resourceName: error.resourceName }),
      nodeId: this.client.bootstrap.node.id,
      details: error.details,
      cause: error,
    });
  }

  // ---- building the configuration ----

  /** Something changed: the configuration is built again at the end of the tick. */
  schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      if (this.closed) return;
      try {
        this.update();
      } catch (e) {
        // A bug, or input nothing else caught: this channel's RPCs fail, the process goes on.
        logError(
          `xds-client: building the channel's configuration: ${e instanceof Error ? e.stack : e}`,
        );
        const reason = `internal error building the xDS configuration: ${errorReason(e)}`;
        this.fail(
          new XdsError(status.UNAVAILABLE, reason, { nodeId: this.client.bootstrap.node.id }),
        );
      }
    });
  }

  private update(): void {
    const fatal = this.listenerError ?? this.routeError;
    if (fatal) return this.fail(fatal);
    const { listener, routeConfig } = this;
    if (!listener || !routeConfig) return;
    const virtualHost = findVirtualHost(routeConfig.virtualHosts, this.dataPlaneAuthority);
    if (!virtualHost) {
      return this.fail(
        new XdsError(
          status.UNAVAILABLE,
          `RouteConfiguration "${routeConfig.name}" has no virtual host for authority ` +
            `"${this.dataPlaneAuthority}"`,
          { nodeId: this.client.bootstrap.node.id },
        ),
      );
    }
    this.reportedFatal = undefined;
    const wanted = routeClusters(virtualHost);
    // Kept as a list (usually of one): a Set is ~150 bytes with one entry.
    this.routeNames = [...wanted];
    for (const name of this.subscriptions.keys()) wanted.add(name);
    this.syncClusters(wanted);
    const clusters = this.collectClusters();
    if (!clusters) return; // some part is still on its way
    const node = this.client.bootstrap.node;
    const rootClusters = Object.freeze([...this.roots.keys()]);
    this.out.onConfig(
      Object.freeze({
        listener,
        routeConfig,
        virtualHost,
        clusters,
        rootClusters,
        nodeId: node.id,
        node,
        certificateProviders: this.client.bootstrap.certificateProviders,
      }),
    );
  }

  /** The channel cannot route: no cluster is needed, and the error is reported once. */
  private fail(error: XdsError): void {
    this.syncClusters(new Set());
    if (this.reportedFatal === error.message) return;
    this.reportedFatal = error.message;
    this.out.onError(error);
  }

  /** Starts a tree watch for every wanted root, stops those no longer wanted. */
  private syncClusters(wanted: ReadonlySet<string>): void {
    for (const [name, root] of this.roots) {
      if (wanted.has(name)) continue;
      root.handle.cancel();
      this.roots.delete(name);
    }
    for (const name of wanted) {
      if (this.roots.has(name)) continue;
      this.roots.set(name, new RootState(this, this.client, name));
    }
    this.syncLeaves();
  }

  /** One ClusterResolver per leaf cluster of the known trees. */
  private syncLeaves(): void {
    const mechanisms = new Map<string, DiscoveryMechanism>();
    for (const root of this.roots.values()) {
      if (!root.result || !('update' in root.result)) continue;
      for (const mechanism of root.result.update.mechanisms) {
        if (!mechanisms.has(mechanism.cluster)) mechanisms.set(mechanism.cluster, mechanism);
      }
    }
    for (const [name, leaf] of this.leaves) {
      if (mechanisms.has(name)) continue;
      leaf.resolver.close();
      this.leaves.delete(name);
    }
    for (const [name, mechanism] of mechanisms) {
      const known = this.leaves.get(name);
      if (known) {
        if (known.mechanism !== mechanism) {
          // Another discovery (EDS ↔ DNS, another service name): its endpoints are not the
          // old ones, so the leaf waits for them rather than pair the new kind with old data.
          if (discoveryKey(known.mechanism) !== discoveryKey(mechanism))
            known.priorities = undefined;
          known.mechanism = mechanism;
          known.resolver.updateMechanisms([mechanism]);
        }
        continue;
      }
      const options = this.options.dnsResolver ? { dnsResolver: this.options.dnsResolver } : {};
      this.leaves.set(name, new LeafState(this, this.client, mechanism, options));
    }
  }

  /** Every root's and leaf's result, or undefined while any is still unknown. */
  private collectClusters(): Map<string, ClusterResult> | undefined {
    const clusters = new Map<string, ClusterResult>();
    for (const [name, root] of this.roots) {
      const result = root.result;
      if (!result) return undefined;
      if ('error' in result) {
        clusters.set(name, { ok: false, error: this.forRpcs(result.error) });
        continue;
      }
      const { update } = result;
      const cluster = update.clusters.get(name);
      if (cluster?.type === 'AGGREGATE') {
        const leafClusters = update.mechanisms.map((m) => m.cluster);
        clusters.set(name, { ok: true, value: { type: 'aggregate', cluster, leafClusters } });
      }
      for (const mechanism of update.mechanisms) {
        if (clusters.has(mechanism.cluster)) continue;
        const leaf = this.leaves.get(mechanism.cluster);
        const leafCluster = update.clusters.get(mechanism.cluster);
        if (!leaf?.priorities || !leafCluster) return undefined;
        clusters.set(mechanism.cluster, {
          ok: true,
          value: {
            type: 'leaf',
            cluster: leafCluster,
            mechanism: leaf.mechanism,
            priorities: leaf.priorities,
            ...(leaf.note === undefined ? {} : { resolutionNote: leaf.note }),
          },
        });
      }
    }
    return clusters;
  }
}

/** What a mechanism discovers: a change of it means other endpoints. */
function discoveryKey(m: DiscoveryMechanism): string {
  return JSON.stringify([m.type, m.edsServiceName ?? null, m.dnsHostname ?? null]);
}

/** The clusters the routes of a virtual host can send RPCs to. */
export function routeClusters(virtualHost: VirtualHost): Set<string> {
  const names = new Set<string>();
  for (const route of virtualHost.routes) {
    const action = route.action;
    if (action.type === 'cluster') names.add(action.cluster);
    else if (action.type === 'weighted_clusters') {
      for (const c of action.clusters) names.add(c.name);
    }
  }
  return names;
}
