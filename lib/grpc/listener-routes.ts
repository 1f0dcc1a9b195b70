// One Listener and the RouteConfigurations its HttpConnectionManagers name over RDS (gRFC A27,
// A36, A74): the watch a channel (dependency-manager.ts) and a server port (server/bound-port.ts)
// both start from. A client Listener has one connection manager, a server Listener one per
// filter chain; the RDS names they share are watched once. The owner hears of a Listener only
// together with a result (routes or an error) for every name it uses, never half of it.

import { status } from '@grpc/grpc-js';
import type { WatchHandle } from '../client/cache/resource-watcher';
import { isXdsError, XdsError } from '../errors';
import type { HttpConnectionManagerConfig, ListenerUpdate } from '../resources/listener';
import type { RouteConfigUpdate } from '../resources/route-config';
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

export class ListenerRoutesWatch {
  private readonly listenerWatch: WatchHandle;
  private listener: ListenerUpdate | undefined;
  private readonly routes = new Map<
    string,
    { readonly handle: WatchHandle; result: RouteResult | undefined }
  >();
  private closed = false;

  constructor(
    private readonly client: XdsClient,
    private readonly listenerName: string,
    private readonly check: ListenerCheck,
    private readonly out: ListenerRoutesListener,
  ) {
    this.listenerWatch = client.watchListener(listenerName, {
      onResourceChanged: (listener) => this.onListener(listener),
      onResourceError: (error) => this.fail(error),
      onAmbientError: (error) => this.keep(error),
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.listenerWatch.cancel();
    this.dropRoutes(new Set());
  }

  private onListener(listener: ListenerUpdate): void {
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

  private watchRoutes(name: string): void {
    const entry: { handle: WatchHandle; result: RouteResult | undefined } = {
      handle: { cancel: () => {} },
      result: undefined,
    };
    this.routes.set(name, entry);
    const update = (result: RouteResult) => {
      if (this.closed || this.routes.get(name) !== entry) return;
      entry.result = result;
      this.report();
    };
    try {
      entry.handle = this.client.watchRouteConfiguration(name, {
        onResourceChanged: update,
        onResourceError: update,
        onAmbientError: (error) => this.keep(error),
      });
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

  /** A NACK or an outage with a good version cached: keep using it (A88). */
  private keep(error: XdsError): void {
    if (trace.enabled) {
      trace.log(`${this.listenerName}: keeping cached resources: ${error.message}`);
    }
  }
}
