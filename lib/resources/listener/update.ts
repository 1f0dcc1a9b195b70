// The validated, immutable form of a client-side Listener, shared by every watcher.
// Field-by-field meaning and defaults: docs/resources/listener.md.
import type { FaultInjectionConfig, RouteConfigUpdate } from '../route-config/update';

export interface ListenerUpdate {
  readonly name: string;
  /** The HttpConnectionManager in `api_listener.api_listener`. */
  readonly httpConnectionManager: HttpConnectionManagerConfig;
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
}
