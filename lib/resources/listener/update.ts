// The validated, immutable form of a client-side Listener, shared by every watcher.
// Field-by-field meaning and defaults: docs/resources/listener.md.
import type { CertificateProviderInstance } from '../cluster/update';
import type { CidrRangeConfig } from '../common';
import type { RbacConfig } from '../rbac/update';
import type { StatefulSessionConfig } from '../stateful-session/update';
import type { GcpAuthnConfig } from '../gcp-authn/update';
import type { FaultInjectionConfig, RouteConfigUpdate } from '../route-config/update';

export interface ListenerUpdate {
  readonly name: string;
  /** The HttpConnectionManager in `api_listener.api_listener`. */
  readonly httpConnectionManager: HttpConnectionManagerConfig;
  /** Set for a server-side Listener (no api_listener): gRFC A36. */
  readonly server?: ServerListenerConfig;
}

/**
 * Exactly one of `routeConfigName` (fetch that RouteConfiguration over RDS) and `routeConfig`
 * (inlined, already validated) is set.
 */
export interface HttpConnectionManagerConfig {
  readonly routeConfigName: string | undefined;
  readonly routeConfig: RouteConfigUpdate | undefined;
  /** The filters to run, in order; the last is always the router. */
  readonly httpFilters: readonly HttpFilterConfig[];
  /**
   * gRFC A31: `common_http_protocol_options.max_stream_duration`, the RPC deadline cap unless a
   * route sets its own. 0 means no limit; absent when unset.
   */
  readonly maxStreamDurationMs?: number;
}

export interface HttpFilterConfig {
  /** The filter instance name, unique in the chain. */
  readonly name: string;
  /**
   * `type.googleapis.com/` + the config type (the type a TypedStruct wraps, if it was one):
   * the router or the fault injection filter.
   */
  readonly typeUrl: string;
  readonly isOptional: boolean;
  /** The fault injection filter's config (gRFC A33), when `typeUrl` is `HTTPFault`. */
  readonly fault?: FaultInjectionConfig;
  /** The RBAC filter's config (gRFC A41, server side), when `typeUrl` is the RBAC filter's. */
  readonly rbac?: RbacConfig;
  /** The stateful session filter's config (gRFC A55), when `typeUrl` is `StatefulSession`. */
  readonly statefulSession?: StatefulSessionConfig;
  /** The GCP authentication filter's config (gRFC A83), when `typeUrl` is `GcpAuthnFilterConfig`. */
  readonly gcpAuthn?: GcpAuthnConfig;
}

/**
 * A server-side Listener (gRFC A36): the address it is for and its filter chains. Set on a
 * ListenerUpdate exactly when the Listener had no api_listener; its `httpConnectionManager` is
 * then empty and unused.
 */
export interface ServerListenerConfig {
  /** `address.socket_address.address`: an IP address. */
  readonly address: string;
  readonly port: number;
  /** The chains that can match, in order; chains with match fields gRPC ignores are dropped. */
  readonly filterChains: readonly ServerFilterChain[];
  readonly defaultFilterChain: ServerFilterChain | undefined;
}

export interface ServerFilterChain {
  readonly name: string;
  readonly match: FilterChainMatchConfig;
  readonly httpConnectionManager: HttpConnectionManagerConfig;
  /**
   * The chain's DownstreamTlsContext (gRFC A29): its connections use TLS with these
   * certificates when the server uses XdsServerCredentials. Absent: the fallback credentials.
   */
  readonly security?: DownstreamTlsConfig;
}

/** A filter chain's TLS settings: the server's identity and how client certificates are checked. */
export interface DownstreamTlsConfig {
  /** The server's certificate and key. */
  readonly identityCertificateProvider: CertificateProviderInstance;
  /**
   * The CA that client certificates are verified against; when set, the server asks clients for
   * a certificate. Undefined: server-authenticated TLS only.
   */
  readonly rootCertificateProvider: CertificateProviderInstance | undefined;
  /** Connections without a valid client certificate are refused. */
  readonly requireClientCertificate: boolean;
}

/** A filter chain match's CIDR range: an unset prefix length is the address's full length. */
export type { CidrRangeConfig } from '../common';

export interface FilterChainMatchConfig {
  readonly destinationPrefixes: readonly CidrRangeConfig[];
  readonly sourceType: 'any' | 'same_ip_or_loopback' | 'external';
  readonly sourcePrefixes: readonly CidrRangeConfig[];
  readonly sourcePorts: readonly number[];
}
