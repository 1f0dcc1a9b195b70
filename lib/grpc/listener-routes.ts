// One Listener and the RouteConfigurations its HttpConnectionManagers name over RDS (gRFC A27,
// A36, A74): the watch a channel (dependency-manager.ts) and a server port (server/bound-port.ts)
// both start from. A client Listener has one connection manager, a server Listener one per
// filter chain; the RDS names they share are watched once. The owner hears of a Listener only
// together with a result (routes or an error) for every name it uses, never half of it.

import { status } from '@grpc/grpc-js';
import type { ResourceWatcher, WatchHandle } from '../client/cache/resource-watcher';
import { isXdsError, XdsError } from '../errors';
import type { HttpConnectionManagerConfig, ListenerUpdate } from '../resources/listener';
import type { RouteConfigUpdate } from '../resources/route-config';
import { SmallMap } from '../small-map';
import { tracer } from '../trace';
import type { XdsClient } from '../xds-client';

const trace = tracer('xds_resolver');

/** What RDS said of one RouteConfiguration: the routes, or why there are none. */
export type RouteResult = RouteConfigUpdate | XdsError;

export interface ListenerRoutesListener {
  /**
   * The Listener, and a result for each RDS name its connection managers use (inline routes
   * are in the Listener). Called on each change of either, once every name has a result.
   */
  onChanged(listener: ListenerUpdate, routes: ReadonlyMap<string, RouteResult>): void;
  /**
   * The Listener does not exist, is invalid with nothing cached, or cannot be used here: no
   * RouteConfiguration is watched until it changes.
   */
  onError(error: XdsError): void;
}

/**
 * Why this owner cannot use a Listener that validated (a channel given a server Listener, a
 * server port given another address's), or undefined.
 */
export type ListenerCheck = (listener: ListenerUpdate) => string | undefined;

/** The connection managers of a Listener: the api_listener's, or one per server filter chain. */
export function connectionManagers(listener: ListenerUpdate): HttpConnectionManagerConfig[] {
  const server = listener.server;
  if (!server) return [listener.httpConnectionManager];
  const chains = [...server.filterChains];
  if (server.defaultFilterChain) chains.push(server.defaultFilterChain);
  return chains.map((chain) => chain.httpConnectionManager);
}

/** One RouteConfiguration's watch (it is the watcher) and what it last said. */
class RoutesEntry implements ResourceWatcher<RouteConfigUpdate> {
  handle: WatchHandle = NO_WATCH;
  result: RouteResult | undefined = undefined;

  constructor(
    private readonly owner: ListenerRoutesWatch,
    readonly name: string,
  ) {}

  onResourceChanged(routes: RouteConfigUpdate): void {
    this.owner.routesChanged(this, routes);
  }

  onResourceError(error: XdsError): void {
    this.owner.routesChanged(this, error);
  }

  onAmbientError(error: XdsError): void {
    this.owner.onAmbientError(error);
  }
}

const NO_WATCH: WatchHandle = { cancel: () => {} };

/**
 * A Listener's watch and those of the RouteConfigurations it names. It is its Listener watch's
 * watcher, and each RDS watch's is a RoutesEntry: methods, not closures, for what a channel keeps.
 */
export class ListenerRoutesWatch implements ResourceWatcher<ListenerUpdate> {
  private readonly listenerWatch: WatchHandle;
  private listener: ListenerUpdate | undefined;
  /** A SmallMap: a client Listener names one RouteConfiguration. */
  private readonly routes = new SmallMap<string, RoutesEntry>();
  private closed = false;

  constructor(
    private readonly client: XdsClient,
    private readonly listenerName: string,
    private readonly check: ListenerCheck,
    private readonly out: ListenerRoutesListener,
  ) {
    this.listenerWatch = client.watchListener(listenerName, this);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.listenerWatch.cancel();
    this.dropRoutes(new Set());
  }

  onResourceChanged(listener: ListenerUpdate): void {
    if (this.closed) return;
    const unusable = this.check(listener);
    if (unusable !== undefined) {
      const nodeId = this.client.bootstrap.node.id;
      return this.fail(new XdsError(status.UNAVAILABLE, unusable, { nodeId }));
    }
    this.listener = listener;
    const names = new Set<string>();
    for (const hcm of connectionManagers(listener)) {
      if (hcm.routeConfigName !== undefined) names.add(hcm.routeConfigName);
    }
    this.dropRoutes(names);
    for (const name of names) if (!this.routes.has(name)) this.watchRoutes(name);
    // Always: a Listener whose only change is its filters or timeouts takes effect at once.
    this.report();
  }

  onResourceError(error: XdsError): void {
    this.fail(error);
  }

  /** A NACK or an outage with a good version cached: keep using it (A88). */
  onAmbientError(error: XdsError): void {
    if (trace.enabled) {
      trace.log(`${this.listenerName}: keeping cached resources: ${error.message}`);
    }
  }

  /** What an RDS watch said (through its RoutesEntry). */
  routesChanged(entry: RoutesEntry, result: RouteResult): void {
    if (this.closed || this.routes.get(entry.name) !== entry) return;
    entry.result = result;
    this.report();
  }

  private watchRoutes(name: string): void {
    const entry = new RoutesEntry(this, name);
    this.routes.set(name, entry);
    try {
      entry.handle = this.client.watchRouteConfiguration(name, entry);
    } catch (e) {
      // A name the client refuses (too long to send): the routes cannot be had.
      entry.result = isXdsError(e) ? e : new XdsError(status.INTERNAL, String(e), { cause: e });
    }
  }

  /** Stops the RDS watches of names not in `keep`, and forgets what they said. */
  private dropRoutes(keep: ReadonlySet<string>): void {
    for (const [name, entry] of this.routes) {
      if (keep.has(name)) continue;
      entry.handle.cancel();
      this.routes.delete(name);
    }
  }

  private report(): void {
    const listener = this.listener;
    if (!listener) return;
    const routes = new Map<string, RouteResult>();
    for (const [name, entry] of this.routes) {
      if (entry.result === undefined) return; // some RouteConfiguration is still on its way
      routes.set(name, entry.result);
    }
    this.out.onChanged(listener, routes);
  }

  private fail(error: XdsError): void {
    if (this.closed) return;
    this.listener = undefined;
    this.dropRoutes(new Set());
    this.out.onError(error);
  }
}
