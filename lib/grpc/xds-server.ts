// XdsServer (gRFC A36): a grpc-js Server whose listening ports serve only while the management
// server's Listener for that address says so. Each bound port has its own TCP server; while the
// port is not serving, connections are closed as they arrive; while it serves, each connection
// is matched to a filter chain and handed to that chain's grpc-js connection injector, whose
// interceptor routes every RPC by the chain's HttpConnectionManager: a route with a
// non_forwarding action is served, anything else fails with UNAVAILABLE; then the chain's RBAC
// filters (gRFC A41) may fail it with PERMISSION_DENIED. With XdsServerCredentials, a chain's
// DownstreamTlsContext gives its injector TLS credentials (gRFC A29, xds-credentials.ts).
// Usage: docs/server.md, docs/security.md.
import * as net from 'node:net';
import {
  experimental,
  Metadata,
  Server,
  ServerInterceptingCall,
  status,
  type ServerCredentials,
  type ServerInterceptingCallInterface,
  type ServerInterceptor,
  type ServerOptions,
} from '@grpc/grpc-js';
import type { WatchHandle } from '../client/resource-watcher';
import { XdsError } from '../errors';
import type { ServerFilterChain, ServerListenerConfig } from '../resources/listener/update';
import type { RouteConfigUpdate } from '../resources/route-config';
import { findVirtualHost } from '../resources/route-config';
import { leaseClient, type ClientLease } from './client-pool';
import { percentEncodePath } from './listener-name';
import { logError } from '../trace';
import { BOOTSTRAP_OPTION, RESOURCE_TIMEOUT_OPTION } from './names';
import { checkRbac, rbacConfigsFor, rbacRequestOf } from './rbac';
import { RouteTable } from './routing';
import { selectFilterChain } from './server-chains';
import { chainCredentials } from './xds-credentials';

/** What `onServingStatusUpdate` reports: serving, or not with the reason. */
export interface ServingStatus {
  readonly serving: boolean;
  readonly error?: Error;
}

export interface XdsServerOptions extends ServerOptions {
  /**
   * Called with the bound address (`ip:port`) each time a port starts or stops serving, and the
   * first time its Listener is found missing or invalid. Default: nothing.
   */
  onServingStatusUpdate?(address: string, status: ServingStatus): void;
  /** How long connections drained by a Listener change or removal may finish (default 10 min). */
  drainGraceTimeMs?: number;
  /** The bootstrap (object or JSON text); default: the environment variables. */
  [BOOTSTRAP_OPTION]?: object | string;
  [RESOURCE_TIMEOUT_OPTION]?: number;
}

const DEFAULT_DRAIN_GRACE_MS = 10 * 60 * 1000;

interface Injector {
  injectConnection(connection: net.Socket): void;
  drain(graceTimeMs: number): void;
  destroy(): void;
}

/** How an RPC is refused before it reaches the service. */
interface Refusal {
  readonly code: status;
  readonly details: string;
}

interface RdsState {
  readonly handle: WatchHandle;
  update: RouteConfigUpdate | undefined;
  error: XdsError | undefined;
}

/** One Listener version's chains, each with the injector its connections go to. */
interface Generation {
  readonly listener: ServerListenerConfig;
  readonly injectors: Map<ServerFilterChain, Injector>;
  /** Gives back the chains' certificate providers once their injectors are gone. */
  readonly release: () => void;
}

class BoundPort {
  private lease: ClientLease | undefined;
  private watch: WatchHandle | undefined;
  private readonly rds = new Map<string, RdsState>();
  private generation: Generation | undefined;
  private serving = false;
  private reported = false;
  private closed = false;

  constructor(
    private readonly owner: XdsServer,
    readonly address: string,
    private readonly host: string,
    private readonly port: number,
    private readonly tcp: net.Server,
    private readonly credentials: ServerCredentials,
  ) {
    tcp.on('connection', (socket) => this.onConnection(socket));
  }

  start(lease: ClientLease, listenerName: string): void {
    this.lease = lease;
    this.watch = lease.client.watchListener(listenerName, {
      onResourceChanged: (update) => {
        const server = update.server;
        if (!server) {
          this.fail(`Listener ${listenerName} is not a server-side Listener`);
        } else if (!sameAddress(server.address, this.host) || server.port !== this.port) {
          this.fail(
            `Listener ${listenerName} is for ${server.address}:${server.port}, not ${this.address}`,
          );
        } else {
          this.use(server);
        }
      },
      onResourceError: (error) => this.fail(error.message, error),
      // An error with a usable Listener cached changes nothing (A36).
      onAmbientError: () => {},
    });
  }

  private use(listener: ServerListenerConfig): void {
    if (this.closed) return;
    const old = this.generation;
    const injectors = new Map<ServerFilterChain, Injector>();
    const chains = [...listener.filterChains];
    if (listener.defaultFilterChain) chains.push(listener.defaultFilterChain);
    const rdsNames = new Set<string>();
    const releases: (() => void)[] = [];
    const providers = this.lease!.client.bootstrap.certificateProviders;
    for (const chain of chains) {
      const hcm = chain.httpConnectionManager;
      if (hcm.routeConfigName !== undefined) rdsNames.add(hcm.routeConfigName);
      const { credentials, release } = chainCredentials(
        this.credentials,
        chain.security,
        providers,
      );
      releases.push(release);
      // RBAC's `authenticated` principals need to know whether the chain's connections use TLS.
      const interceptor = this.interceptor(chain, credentials._isSecure());
      injectors.set(chain, this.owner.injectorFor(credentials, interceptor));
    }
    this.generation = { listener, injectors, release: () => releases.forEach((r) => r()) };
    for (const name of rdsNames) if (!this.rds.has(name)) this.watchRoutes(name);
    for (const [name, state] of this.rds) {
      if (!rdsNames.has(name)) {
        state.handle.cancel();
        this.rds.delete(name);
      }
    }
    // Connections accepted under the previous Listener finish on its configuration.
    if (old) this.retire(old);
    this.updateServing();
  }

  private watchRoutes(name: string): void {
    const state: RdsState = {
      update: undefined,
      error: undefined,
      handle: this.lease!.client.watchRouteConfiguration(name, {
        onResourceChanged: (update) => {
          state.update = update;
          state.error = undefined;
          this.updateServing();
        },
        onResourceError: (error) => {
          state.update = undefined;
          state.error = error;
          this.updateServing();
        },
      }),
    };
    this.rds.set(name, state);
  }

  /** Serving once the Listener and every RouteConfiguration it names have been heard of. */
  private updateServing(): void {
    if (!this.generation) return;
    for (const state of this.rds.values()) if (!state.update && !state.error) return;
    this.report(true, undefined);
  }

  private fail(reason: string, cause?: XdsError): void {
    if (this.closed) return;
    const error =
      cause ??
      new XdsError(status.UNAVAILABLE, reason, { nodeId: this.lease!.client.bootstrap.node.id });
    const old = this.generation;
    this.generation = undefined;
    for (const state of this.rds.values()) state.handle.cancel();
    this.rds.clear();
    if (old) this.retire(old);
    this.report(false, error);
  }

  private report(serving: boolean, error: Error | undefined): void {
    if (this.reported && serving === this.serving) return;
    this.reported = true;
    this.serving = serving;
    this.owner.reportStatus(
      this.address,
      serving ? { serving } : { serving, ...(error ? { error } : {}) },
    );
  }

  private retire(generation: Generation): void {
    for (const injector of generation.injectors.values()) {
      injector.drain(this.owner.drainGraceTimeMs);
      injector.destroy();
    }
    generation.release();
  }

  private onConnection(socket: net.Socket): void {
    const generation = this.generation;
    if (!this.serving || !generation) {
      socket.destroy();
      return;
    }
    const chain = selectFilterChain(generation.listener, {
      localAddress: socket.localAddress ?? '',
      remoteAddress: socket.remoteAddress ?? '',
      remotePort: socket.remotePort ?? 0,
    });
    const injector = chain && generation.injectors.get(chain);
    if (!injector) {
      socket.destroy();
      return;
    }
    injector.injectConnection(socket);
  }

  /**
   * Routes each RPC of a chain's connections (A36's server-side routing), then runs the chain's
   * RBAC filters on it (A41).
   */
  private interceptor(chain: ServerFilterChain, tls: boolean): ServerInterceptor {
    return (method, call) =>
      new ServerInterceptingCall(call, {
        start: (next) => {
          next({
            onReceiveMetadata: (metadata, nextMetadata) => {
              let refusal: Refusal | undefined;
              try {
                refusal = this.refusal(chain, call, method.path, metadata, tls);
              } catch (e) {
                // Nothing may throw into grpc-js; an unexpected error refuses the RPC.
                refusal = { code: status.INTERNAL, details: `XdsServer: ${String(e)}` };
              }
              if (refusal === undefined) nextMetadata(metadata);
              else call.sendStatus({ ...refusal, metadata: new Metadata() });
            },
          });
        },
      });
  }

  /** Why an RPC is refused, or undefined to serve it. */
  private refusal(
    chain: ServerFilterChain,
    call: ServerInterceptingCallInterface,
    path: string,
    metadata: Metadata,
    tls: boolean,
  ): Refusal | undefined {
    // gRFC A36: UNAVAILABLE, naming the node as every error the plugin reports does.
    const nodeId = this.lease!.client.bootstrap.node.id;
    const unavailable = (reason: string) => ({
      code: status.UNAVAILABLE,
      details: new XdsError(status.UNAVAILABLE, reason, { nodeId }).message,
    });
    const hcm = chain.httpConnectionManager;
    let routeConfig = hcm.routeConfig;
    if (!routeConfig && hcm.routeConfigName !== undefined) {
      const state = this.rds.get(hcm.routeConfigName);
      routeConfig = state?.update;
      if (!routeConfig) {
        return unavailable(
          `RouteConfiguration ${hcm.routeConfigName} unavailable${state?.error ? `: ${state.error.reason}` : ''}`,
        );
      }
    }
    if (!routeConfig) return unavailable('no route configuration');
    const host = call.getHost();
    const virtualHost = findVirtualHost(routeConfig.virtualHosts, host);
    if (!virtualHost) return unavailable(`no virtual host for authority ${JSON.stringify(host)}`);
    const found = RouteTable.for(virtualHost, undefined).match(path, metadata);
    if ('message' in found) return unavailable(found.message);
    if (found.route.action.type !== 'non_forwarding') {
      return unavailable(
        `${found.label}: a server serves only routes with a non_forwarding action`,
      );
    }
    const rbac = rbacConfigsFor(hcm.httpFilters, virtualHost, found.route);
    if (rbac.length === 0) return undefined;
    const decision = checkRbac(rbac, rbacRequestOf(call, path, metadata, tls));
    return decision.allowed
      ? undefined
      : { code: status.PERMISSION_DENIED, details: `RBAC: ${decision.reason}` };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.tcp.close();
    this.watch?.cancel();
    for (const state of this.rds.values()) state.handle.cancel();
    this.rds.clear();
    if (this.generation) {
      for (const injector of this.generation.injectors.values()) injector.destroy();
      this.generation.release();
    }
    this.generation = undefined;
    this.lease?.release();
  }
}

function sameAddress(a: string, b: string): boolean {
  return (
    a === b ||
    (net.isIP(a) === 6 &&
      net.isIP(b) === 6 &&
      new net.SocketAddress({ address: a, family: 'ipv6' }).address ===
        new net.SocketAddress({ address: b, family: 'ipv6' }).address)
  );
}

/** `ip:port` or `[ipv6]:port` → its parts; undefined for anything else (A36 needs an IP). */
function parseHostPort(text: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(text);
  if (!match) return undefined;
  const host = match[1] ?? match[2]!;
  const port = Number(match[3]);
  if (net.isIP(host) === 0 || port > 65535) return undefined;
  return { host, port };
}

export class XdsServer extends Server {
  private readonly ports = new Set<BoundPort>();
  private readonly onStatus: XdsServerOptions['onServingStatusUpdate'];
  private readonly bootstrap: object | string | undefined;
  private readonly resourceTimeoutMs: number | undefined;
  /** @internal */
  readonly drainGraceTimeMs: number;

  constructor(options: XdsServerOptions = {}) {
    const {
      onServingStatusUpdate,
      drainGraceTimeMs,
      [BOOTSTRAP_OPTION]: bootstrap,
      [RESOURCE_TIMEOUT_OPTION]: resourceTimeoutMs,
      ...rest
    } = options;
    super(rest);
    this.onStatus = onServingStatusUpdate;
    this.bootstrap = bootstrap;
    this.resourceTimeoutMs = resourceTimeoutMs;
    this.drainGraceTimeMs = drainGraceTimeMs ?? DEFAULT_DRAIN_GRACE_MS;
  }

  /**
   * Listens on `port` (`ip:port`; port 0 picks one) at once, calling back with the bound port,
   * and serves there only while its Listener (the bootstrap's
   * `server_listener_resource_name_template` with `%s` → `ip:port`) allows it.
   */
  override bindAsync(
    port: string,
    creds: ServerCredentials,
    callback: (error: Error | null, port: number) => void,
  ): void {
    const fail = (message: string) =>
      process.nextTick(() => callback(new Error(`XdsServer.bindAsync(${port}): ${message}`), 0));
    const parsed = parseHostPort(port);
    if (!parsed) return fail('the address must be ip:port');
    let lease: ClientLease;
    try {
      lease = leaseClient(
        { bootstrap: this.bootstrap, resourceTimeoutMs: this.resourceTimeoutMs },
        '',
      );
    } catch (e) {
      return fail(e instanceof Error ? e.message : String(e));
    }
    const template = lease.client.bootstrap.serverListenerResourceNameTemplate;
    if (template === undefined) {
      lease.release();
      return fail('the bootstrap has no server_listener_resource_name_template');
    }
    const tcp = net.createServer({ pauseOnConnect: false });
    tcp.once('error', (e) => {
      lease.release();
      callback(e, 0);
    });
    tcp.listen({ host: parsed.host, port: parsed.port }, () => {
      tcp.removeAllListeners('error');
      // An error on a listening port (rare: e.g. accept failing) must not crash the process.
      tcp.on('error', (e) => logError(`XdsServer ${port}: ${e.message}`));
      const actual = (tcp.address() as net.AddressInfo).port;
      const hostPort =
        net.isIP(parsed.host) === 6 ? `[${parsed.host}]:${actual}` : `${parsed.host}:${actual}`;
      const id = template.startsWith('xdstp:') ? percentEncodePath(hostPort) : hostPort;
      const bound = new BoundPort(this, hostPort, parsed.host, actual, tcp, creds);
      this.ports.add(bound);
      bound.start(lease, template.replaceAll('%s', id));
      callback(null, actual);
    });
  }

  /** @internal */
  injectorFor(credentials: ServerCredentials, interceptor: ServerInterceptor): Injector {
    return this.createConnectionInjector(
      experimental.createServerCredentialsWithInterceptors(credentials, [interceptor]),
    ) as Injector;
  }

  /** @internal */
  reportStatus(address: string, status: ServingStatus): void {
    this.onStatus?.(address, status);
  }

  override forceShutdown(): void {
    this.closePorts();
    super.forceShutdown();
  }

  override tryShutdown(callback: (error?: Error) => void): void {
    this.closePorts();
    super.tryShutdown(callback);
  }

  private closePorts(): void {
    for (const port of this.ports) port.close();
    this.ports.clear();
  }
}
