// One Listener version's filter chains, each with the grpc-js connection injector its
// connections go to: the chain's credentials (gRFC A29: its DownstreamTlsContext, else the
// server's) and its admission interceptor (rpc-admission.ts). A newer Listener retires the
// previous injectors, which drain the connections they hold.
import type * as net from 'node:net';
import type { ServerCredentials, ServerInterceptor } from '@grpc/grpc-js';
import type { SpiffeClientCheck } from '../certificates/spiffe-client-check';
import type { CertificateProviderConfig } from '../../bootstrap';
import type { ServerFilterChain, ServerListenerConfig } from '../../resources/listener/update';
import { selectFilterChain } from '../server-chains';
import { chainCredentials } from '../xds-credentials';
import { admissionInterceptor, type AdmissionContext } from './rpc-admission';

/** A grpc-js connection injector, as the chains use it. */
export interface Injector {
  injectConnection(connection: net.Socket): void;
  drain(graceTimeMs: number): void;
  destroy(): void;
}

/**
 * Makes an injector for a chain's credentials and interceptor (the XdsServer's grpc-js), whose
 * clients `clientCheck` checks (A87) when the chain has one.
 */
export type InjectorFactory = (
  credentials: ServerCredentials,
  interceptor: ServerInterceptor,
  clientCheck: SpiffeClientCheck | undefined,
) => Injector;

export class ChainInjectors {
  private readonly injectors = new Map<ServerFilterChain, Injector>();
  /** Gives back the chains' certificate providers once their injectors are gone. */
  private readonly releases: (() => void)[] = [];

  constructor(
    readonly listener: ServerListenerConfig,
    serverCredentials: ServerCredentials,
    providers: ReadonlyMap<string, CertificateProviderConfig>,
    context: AdmissionContext,
    injectorFor: InjectorFactory,
  ) {
    const chains = [...listener.filterChains];
    if (listener.defaultFilterChain) chains.push(listener.defaultFilterChain);
    for (const chain of chains) {
      const { credentials, clientCheck, release } = chainCredentials(
        serverCredentials,
        chain.security,
        providers,
      );
      this.releases.push(release);
      // RBAC's `authenticated` principals need to know whether the chain's connections use TLS.
      const admission = admissionInterceptor(chain, credentials._isSecure(), context);
      this.injectors.set(chain, injectorFor(credentials, admission, clientCheck));
    }
  }

  /** Hands a new connection to its chain's injector; false if no chain matches it. */
  inject(socket: net.Socket): boolean {
    const chain = selectFilterChain(this.listener, {
      localAddress: socket.localAddress ?? '',
      remoteAddress: socket.remoteAddress ?? '',
      remotePort: socket.remotePort ?? 0,
    });
    const injector = chain && this.injectors.get(chain);
    if (!injector) return false;
    injector.injectConnection(socket);
    return true;
  }

  /** Superseded: connections already accepted finish within the grace time. */
  retire(graceTimeMs: number): void {
    for (const injector of this.injectors.values()) {
      injector.drain(graceTimeMs);
      injector.destroy();
    }
    this.release();
  }

  /** The server is shutting down. */
  destroy(): void {
    for (const injector of this.injectors.values()) injector.destroy();
    this.release();
  }

  private release(): void {
    for (const release of this.releases.splice(0)) release();
  }
}
