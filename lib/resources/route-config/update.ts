// The validated, immutable form of a RouteConfiguration (gRFC A28), shared by every watcher.
// Field-by-field meaning and defaults: docs/resources/route-config.md.
import type { HeaderMatch } from '../matcher-update';
import type { RbacConfig } from '../rbac/update';
import type { StatefulSessionConfig } from '../stateful-session/update';

export type { HeaderMatch, StringMatch } from '../matcher-update';

export interface RouteConfigUpdate {
  readonly name: string;
  readonly virtualHosts: readonly VirtualHost[];
}

export interface VirtualHost {
  readonly name: string;
  /** Domain patterns as sent: `foo.com`, `*.foo.com`, `foo.*`, `*`. Never empty. */
  readonly domains: readonly string[];
  /** The usable routes, in order; the first whose `match` matches wins. */
  readonly routes: readonly Route[];
  /**
   * Routes left out because gRPC cannot act on them: `query_parameters` matchers, or a cluster
   * specifier other than `cluster`, `weighted_clusters` or a supported plugin. They can never
   * match an RPC in gRPC, so dropping them changes nothing; the count is for debugging.
   */
  readonly skippedRoutes: number;
  /** The virtual host's own retry policy; already applied to routes that have none. */
  readonly retryPolicy?: RetryPolicy;
  /** `typed_per_filter_config` by filter name (A39); absent when it has no kept entry. */
  readonly typedPerFilterConfig?: FilterOverrides;
}

export interface Route {
  /** `Route.name`, when set. */
  readonly name?: string;
  readonly match: RouteMatch;
  readonly action: RouteAction;
  /** `typed_per_filter_config` by filter name (A39); absent when it has no kept entry. */
  readonly typedPerFilterConfig?: FilterOverrides;
}

export interface RouteMatch {
  readonly path: PathMatch;
  /** Applies to the path matcher only (default true). */
  readonly caseSensitive: boolean;
  /** All must match. */
  readonly headers: readonly HeaderMatch[];
  /**
   * `runtime_fraction.default_value` in parts per million, capped at 1,000,000: the route is
   * considered for that share of RPCs. Absent: always considered.
   */
  readonly runtimeFractionPerMillion?: number;
}

export type PathMatch =
  | { readonly type: 'prefix'; readonly prefix: string }
  | { readonly type: 'path'; readonly path: string }
  /** The whole path must match `regex`, an RE2 pattern (checked by validation). */
  | { readonly type: 'safe_regex'; readonly regex: string };

/** What to do with an RPC that matched. */
export type RouteAction =
  | ClusterAction
  | WeightedClustersAction
  /** Server-side only: a client fails RPCs that match it. */
  | { readonly type: 'non_forwarding' }
  /**
   * An action gRPC does not implement (`redirect`, `direct_response`, `filter_action`, or none).
   * The route is kept so that RPCs matching it fail, as gRPC does, rather than fall through to a
   * later route.
   */
  | {
      readonly type: 'unsupported';
      readonly action: 'redirect' | 'direct_response' | 'filter_action' | 'unset';
    };

/** What every forwarding action carries besides its cluster(s). */
export interface ForwardingSettings {
  /**
   * gRFC A31: `max_stream_duration.grpc_timeout_header_max` if set, else
   * `max_stream_duration.max_stream_duration`. Present means it overrides the Listener's value;
   * 0 means no limit.
   */
  readonly maxStreamDurationMs?: number;
  /** gRFC A44: the route's retry policy, or else its virtual host's. */
  readonly retryPolicy?: RetryPolicy;
  /** gRFC A42: ring-hash inputs, in order. Unsupported kinds are left out. */
  readonly hashPolicies: readonly HashPolicy[];
  /**
   * gRFC A81: `auto_host_rewrite` is true and the resource came from a server with
   * `trusted_xds_server`: RPCs carry the picked endpoint's hostname as :authority. Present, and
   * true, only then.
   */
  readonly autoHostRewrite?: true;
}

export interface ClusterAction extends ForwardingSettings {
  readonly type: 'cluster';
  /** Non-empty. */
  readonly cluster: string;
}

export interface WeightedClustersAction extends ForwardingSettings {
  readonly type: 'weighted_clusters';
  /** Non-empty; zero-weight entries are left out; weights sum to 1 .. 2^32 - 1. */
  readonly clusters: readonly WeightedCluster[];
}

export interface WeightedCluster {
  readonly name: string;
  readonly weight: number;
  /** `typed_per_filter_config` by filter name (A39); absent when it has no kept entry. */
  readonly typedPerFilterConfig?: FilterOverrides;
}

/** The gRPC status codes A44 lets `retry_on` name. */
export type RetryOnCode =
  'cancelled' | 'deadline-exceeded' | 'internal' | 'resource-exhausted' | 'unavailable';

export interface RetryPolicy {
  /** The supported codes named in `retry_on`, without duplicates; empty means never retry. */
  readonly retryOn: readonly RetryOnCode[];
  /** `num_retries`, at least 1 (default 1). */
  readonly numRetries: number;
  /** `retry_back_off.base_interval`, greater than 0 (default 25). */
  readonly baseIntervalMs: number;
  /** `retry_back_off.max_interval`, at least the base (default 10 × base). */
  readonly maxIntervalMs: number;
}

export type HashPolicy =
  | {
      readonly type: 'header';
      readonly headerName: string;
      /** Rewrites the header value before hashing: every match of `regex` → `substitution`. */
      readonly regexRewrite?: { readonly regex: string; readonly substitution: string };
      readonly terminal: boolean;
    }
  /** `filter_state` with key `io.grpc.channel_id`: hash on the channel's identity. */
  | { readonly type: 'channel_id'; readonly terminal: boolean };

/**
 * A `typed_per_filter_config` map: filter instance name → its override. Entries for unknown
 * filter types marked optional are left out. The most specific level wins (A39): weighted
 * cluster, then route, then virtual host, then the filter's own config in the Listener.
 */
export type FilterOverrides = ReadonlyMap<string, FilterOverride>;

export interface FilterOverride {
  /**
   * `type.googleapis.com/` + the override's config type (inside a `FilterConfig` or
   * `TypedStruct` wrapper, if it came in one): `HTTPFault` or `RBACPerRoute`.
   */
  readonly typeUrl: string;
  /** `FilterConfig.is_optional`; false for an override not wrapped in a FilterConfig. */
  readonly isOptional: boolean;
  /** The parsed config, when the override is for the fault injection filter (A33). */
  readonly fault?: FaultInjectionConfig;
  /** The parsed `RBACPerRoute.rbac`, when the override is for the RBAC filter (A41). */
  readonly rbac?: RbacConfig;
  /** The parsed `StatefulSessionPerRoute`, for the stateful session filter (A55). */
  readonly statefulSession?: StatefulSessionConfig;
}

/**
 * gRFC A33: an `envoy.extensions.filters.http.fault.v3.HTTPFault`, in a Listener's HTTP filter
 * chain or as an override. Delay first, then abort; each is drawn independently.
 */
export interface FaultInjectionConfig {
  readonly delay?: FaultDelay;
  readonly abort?: FaultAbort;
  /** `max_active_faults`: at most this many faulted RPCs at once in the process; absent: no limit. */
  readonly maxActiveFaults?: number;
}

/** `FractionalPercent`: `numerator` out of `denominator` (a numerator above it means always). */
export interface FaultPercentage {
  readonly numerator: number;
  readonly denominator: 100 | 10_000 | 1_000_000;
}

export type FaultDelay =
  /** `fixed_delay` (0: no delay). */
  | { readonly type: 'fixed'; readonly delayMs: number; readonly percentage: FaultPercentage }
  /** `header_delay`: the delay in ms comes from the RPC's `x-envoy-fault-delay-request`. */
  | { readonly type: 'header'; readonly percentage: FaultPercentage };

export type FaultAbort =
  /** `grpc_status`: a gRPC status code, 0 to 16 (0, OK, ends the RPC at once with OK). */
  | { readonly type: 'grpc'; readonly code: number; readonly percentage: FaultPercentage }
  /** `http_status` (200 to 599), and the gRPC code it maps to (A33's table). */
  | {
      readonly type: 'http';
      readonly httpStatus: number;
      readonly code: number;
      readonly percentage: FaultPercentage;
    }
  /**
   * `header_abort`: the status comes from the RPC's `x-envoy-fault-abort-request` (HTTP) or
   * `x-envoy-fault-abort-grpc-request` header.
   */
  | { readonly type: 'header'; readonly percentage: FaultPercentage };
