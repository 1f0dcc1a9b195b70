// One port of an XdsServer (gRFC A36): its TCP server, and its Listener with the routes it
// names (listener-routes.ts). While the Listener is good and its routes known, the port serves:
// each connection goes to its filter chain's injector (chain-injectors.ts); otherwise
// connections are closed as they arrive. Each change between serving and not serving is
// reported once.
import type * as net from 'node:net';
import type { ServerCredentials } from '@grpc/grpc-js';
import type { XdsError } from '../../errors';
import type { ListenerUpdate } from '../../resources/listener';
import type { ClientLease } from '../client-pool';
import { ListenerRoutesWatch, type RouteResult } from '../listener-routes';
import { ChainInjectors, type InjectorFactory } from './chain-injectors';
import { sameAddress } from './host-port';

/** What `onServingStatusUpdate` reports: serving, or not with the reason. */
export interface ServingStatus {
  readonly serving: boolean;
  readonly error?: Error;
}

/** What a port needs of its XdsServer. */
export interface PortOwner {
  readonly injectorFor: InjectorFactory;
  readonly reportStatus: (address: string, status: ServingStatus) => void;
  readonly drainGraceTimeMs: number;
}

export class BoundPort {
  private watch: ListenerRoutesWatch | undefined;
  private routes: ReadonlyMap<string, RouteResult> = new Map();
  private chains: ChainInjectors | undefined;
  private serving = false;
  private reported = false;
  private closed = false;

  constructor(
    private readonly owner: PortOwner,
    /** `ip:port`, as reported. */
    readonly address: string,
    private readonly host: string,
    private readonly port: number,
    private readonly tcp: net.Server,
    private readonly credentials: ServerCredentials,
    private readonly lease: ClientLease,
  ) {
    tcp.on('connection', (socket) => this.onConnection(socket));
  }

  /** Starts watching `listenerName`, the bootstrap's server template for this address. */
  start(listenerName: string): void {
    this.watch = new ListenerRoutesWatch(
      this.lease.client,
      listenerName,
      (listener) => this.unusable(listener),
      {
        onChanged: (listener, routes) => this.use(listener, routes),
        onError: (error) => this.stopServing(error),
      },
    );
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.tcp.close();
    this.watch?.close();
    this.chains?.destroy();
    this.chains = undefined;
    this.lease.release();
  }

  /** Why this port cannot use a Listener, or undefined. */
  private unusable(listener: ListenerUpdate): string | undefined {
    const server = listener.server;
    if (!server) return `Listener ${listener.name} is not a server-side Listener`;
    if (!sameAddress(server.address, this.host) || server.port !== this.port) {
      return `Listener ${listener.name} is for ${server.address}:${server.port}, not ${this.address}`;
    }
    return undefined;
  }

  /** A Listener and all its routes: serve them. */
  private use(listener: ListenerUpdate, routes: ReadonlyMap<string, RouteResult>): void {
    if (this.closed) return;
    this.routes = routes;
    const server = listener.server!;
    if (this.chains?.listener !== server) {
      const old = this.chains;
      this.chains = new ChainInjectors(
        server,
        this.credentials,
        this.lease.client.bootstrap.certificateProviders,
        { routes: () => this.routes, nodeId: this.lease.client.bootstrap.node.id },
        this.owner.injectorFor,
      );
      // Connections accepted under the previous Listener finish on its configuration.
      old?.retire(this.owner.drainGraceTimeMs);
    }
    this.report(true, undefined);
  }

  private stopServing(error: XdsError): void {
    if (this.closed) return;
    this.chains?.retire(this.owner.drainGraceTimeMs);
    this.chains = undefined;
    this.routes = new Map();
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

  private onConnection(socket: net.Socket): void {
    if (!this.serving || !this.chains?.inject(socket)) socket.destroy();
  }
}
