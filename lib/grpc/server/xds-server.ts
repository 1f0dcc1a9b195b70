// XdsServer (gRFC A36): a grpc-js Server whose listening ports serve only while the management
// server's Listener for that address says so. Each bound port has its own TCP server
// (bound-port.ts); while it serves, each connection goes to its filter chain's grpc-js
// connection injector (chain-injectors.ts), whose interceptor admits an RPC only on a
// non_forwarding route and through the chain's RBAC filters (rpc-admission.ts, A41). With
// XdsServerCredentials, a chain's DownstreamTlsContext gives its injector TLS credentials
// (gRFC A29, xds-credentials.ts). Usage: docs/server.md, docs/security.md.
import * as net from 'node:net';
import {
  experimental,
  Server,
  type ServerCredentials,
  type ServerInterceptor,
  type ServerOptions,
} from '@grpc/grpc-js';
import { leaseClient, type ClientLease } from '../client-pool';
import { percentEncodePath } from '../listener-name';
import { BOOTSTRAP_OPTION, RESOURCE_TIMEOUT_OPTION } from '../names';
import { errorReason } from '../../errors';
import { logError } from '../../trace';
import { telemetryInterceptorFor } from '../telemetry/server-interceptor';
import { telemetryNow } from '../telemetry/telemetry';
import { recordUnregisteredMethods } from '../telemetry/unregistered-methods';
import { BoundPort, type PortOwner, type ServingStatus } from './bound-port';
import type { Injector } from './chain-injectors';
import { injectorCheckingClients } from './handshake-check';
import type { SpiffeClientCheck } from '../certificates/spiffe-client-check';
import { formatHostPort, parseHostPort } from './host-port';

export type { ServingStatus } from './bound-port';

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

export class XdsServer extends Server {
  private readonly ports = new Set<BoundPort>();
  private readonly bootstrap: object | string | undefined;
  private readonly resourceTimeoutMs: number | undefined;
  /** What its ports need of the server, kept off the class's own (public) members. */
  private readonly portOwner: PortOwner;
  /** A66/A72's interceptor, first on every chain; undefined when nothing records. */
  private readonly telemetryInterceptor: ServerInterceptor | undefined;

  constructor(options: XdsServerOptions = {}) {
    const {
      onServingStatusUpdate,
      drainGraceTimeMs,
      [BOOTSTRAP_OPTION]: bootstrap,
      [RESOURCE_TIMEOUT_OPTION]: resourceTimeoutMs,
      ...rest
    } = options;
    super(rest);
    this.bootstrap = bootstrap;
    this.resourceTimeoutMs = resourceTimeoutMs;
    this.portOwner = {
      injectorFor: (credentials, interceptor, clientCheck) =>
        this.injectorFor(credentials, interceptor, clientCheck),
      reportStatus: (address, status) => onServingStatusUpdate?.(address, status),
      drainGraceTimeMs: drainGraceTimeMs ?? DEFAULT_DRAIN_GRACE_MS,
    };
    const telemetry = telemetryNow();
    if (telemetry) {
      this.telemetryInterceptor = telemetryInterceptorFor(telemetry);
      recordUnregisteredMethods(this, telemetry);
    }
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
      return fail(errorReason(e));
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
      const hostPort = formatHostPort(parsed.host, actual);
      const id = template.startsWith('xdstp:') ? percentEncodePath(hostPort) : hostPort;
      const bound = new BoundPort(this.portOwner, hostPort, parsed.host, actual, tcp, creds, lease);
      try {
        // Watching checks the name: one the template makes invalid (too long, say) throws here,
        // in a listen callback, where nothing may escape into the event loop.
        bound.start(template.replaceAll('%s', id));
      } catch (e) {
        bound.close();
        callback(new Error(`XdsServer ${port}: ${errorReason(e)}`), 0);
        return;
      }
      this.ports.add(bound);
      callback(null, actual);
    });
  }

  override forceShutdown(): void {
    this.closePorts();
    super.forceShutdown();
  }

  override tryShutdown(callback: (error?: Error) => void): void {
    this.closePorts();
    super.tryShutdown(callback);
  }

  /**
   * A87's client check runs in the handshake where grpc-js lets it (handshake-check.ts), else
   * on each RPC, before admission (it is nearer the transport). Telemetry comes first of all,
   * so that it records the RPCs the others refuse.
   */
  private injectorFor(
    credentials: ServerCredentials,
    admission: ServerInterceptor,
    clientCheck: SpiffeClientCheck | undefined,
  ): Injector {
    const telemetry = this.telemetryInterceptor;
    const withInterceptor = (interceptor: ServerInterceptor) =>
      experimental.createServerCredentialsWithInterceptors(
        credentials,
        telemetry ? [telemetry, interceptor] : [interceptor],
      );
    if (clientCheck) {
      const checked = injectorCheckingClients(
        this,
        withInterceptor(admission),
        clientCheck.connectionRefusal,
      );
      if (checked) return checked;
      const perRpc = clientCheck.interceptor;
      const interceptor: ServerInterceptor = (method, call) =>
        admission(method, perRpc(method, call));
      return this.createConnectionInjector(withInterceptor(interceptor)) as Injector;
    }
    return this.createConnectionInjector(withInterceptor(admission)) as Injector;
  }

  private closePorts(): void {
    for (const port of this.ports) port.close();
    this.ports.clear();
  }
}
