// The validated, immutable form of an envoy.config.cluster.v3.Cluster. Watchers share one frozen
// object, so every field is readonly and no protobufjs message leaks through.
import type { XdsServerConfig } from '../../bootstrap';
import type { ClusterMetadataValue } from '../gcp-authn/update';

/**
 * The load-balancing policy a cluster asks for, as gRPC would build it. The legacy `lb_policy`
 * enum maps ROUND_ROBIN to `wrr_locality` over `round_robin` and LEAST_REQUEST to
 * `wrr_locality` over `least_request` (what gRPC C-core and grpc-go do, A48), RING_HASH to
 * `ring_hash`; `load_balancing_policy` (gRFC A52) maps its first supported entry, recursively
 * for `wrr_locality`.
 */
export type LbPolicy =
  | { readonly name: 'round_robin' }
  | {
      readonly name: 'ring_hash';
      /** Default 1024; in [1, 8388608]. */
      readonly minRingSize: number;
      /** Default 8388608; in [1, 8388608] and >= minRingSize. */
      readonly maxRingSize: number;
    }
  | {
      readonly name: 'least_request';
      /** Default 2; at least 2, values above 10 are clamped to 10 (gRFC A48). */
      readonly choiceCount: number;
    }
  | { readonly name: 'pick_first'; readonly shuffleAddressList: boolean }
  | {
      /** Weighted round robin across localities, `child` within each locality. */
      readonly name: 'wrr_locality';
      readonly child: LbPolicy;
    }
  | {
      /**
       * gRFC A58's weighted round robin, weights from the backends' ORCA load reports
       * (`ClientSideWeightedRoundRobin`; grpc-js calls it `weighted_round_robin`).
       */
      readonly name: 'client_side_weighted_round_robin';
      /** Default false: per-call load reports. */
      readonly enableOobLoadReport: boolean;
      /** Default 10000. */
      readonly oobReportingPeriodMs: number;
      /** Default 10000. */
      readonly blackoutPeriodMs: number;
      /** Default 180000. */
      readonly weightExpirationPeriodMs: number;
      /** Default 1000 (the policy raises anything below 100 to 100). */
      readonly weightUpdatePeriodMs: number;
      /** Default 1; never negative. */
      readonly errorUtilizationPenalty: number;
    }
  | {
      /**
       * A policy the application registered with gRPC, named by a `TypedStruct` (gRFC A52).
       * Only produced when the decode context's `lbPolicies` has `policyName`.
       */
      readonly name: 'custom';
      /** The TypedStruct's `type_url` after its last `/`: `myorg.MyPolicy`. */
      readonly policyName: string;
      /** The TypedStruct's `value` (a Struct) as JSON, deeply frozen; `{}` when unset. */
      readonly config: Readonly<Record<string, unknown>>;
    };

/** gRFC A50, with the xDS defaults filled in. */
export interface OutlierDetection {
  /** Default 10000. */
  readonly intervalMs: number;
  /** Default 30000. */
  readonly baseEjectionTimeMs: number;
  /** Default 300000. */
  readonly maxEjectionTimeMs: number;
  /** Percent, in [0, 100]; default 10. */
  readonly maxEjectionPercent: number;
  /** Undefined when `enforcing_success_rate` is 0. */
  readonly successRateEjection: SuccessRateEjection | undefined;
  /** Undefined unless `enforcing_failure_percentage` is set and not 0. */
  readonly failurePercentageEjection: FailurePercentageEjection | undefined;
}

export interface SuccessRateEjection {
  /** Default 1900 (the ejection threshold is mean - stdev * stdevFactor / 1000). */
  readonly stdevFactor: number;
  /** Percent, in [0, 100]; default 100. */
  readonly enforcementPercentage: number;
  /** Default 5. */
  readonly minimumHosts: number;
  /** Default 100. */
  readonly requestVolume: number;
}

export interface FailurePercentageEjection {
  /** Percent, in [0, 100]; default 85. */
  readonly threshold: number;
  /** Percent, in [1, 100]. */
  readonly enforcementPercentage: number;
  /** Default 5. */
  readonly minimumHosts: number;
  /** Default 50. */
  readonly requestVolume: number;
}

/** A certificate provider named in the bootstrap's `certificate_providers` (gRFC A29). */
export interface CertificateProviderInstance {
  readonly instanceName: string;
  /** Opaque to us; passed to the provider. May be empty. */
  readonly certificateName: string;
}

/** One `match_subject_alt_names` entry: the peer certificate must have a SAN that matches. */
export type SubjectAltNameMatcher = {
  readonly ignoreCase: boolean;
} & (
  | { readonly type: 'exact' | 'prefix' | 'suffix' | 'contains'; readonly value: string }
  | { readonly type: 'safe_regex'; readonly regex: string }
);

/** The cluster's UpstreamTlsContext (gRFC A29): present means "use TLS". */
export interface UpstreamTlsConfig {
  /** Where trusted CA certificates come from; undefined when `useSystemRootCerts`. */
  readonly rootCertificateProvider: CertificateProviderInstance | undefined;
  /** `system_root_certs` was set and no CA provider was (gRFC A82). */
  readonly useSystemRootCerts: boolean;
  /** The client's own certificate (mTLS); undefined for server-authenticated TLS only. */
  readonly identityCertificateProvider: CertificateProviderInstance | undefined;
  /** Empty means any SAN is accepted. */
  readonly subjectAltNameMatchers: readonly SubjectAltNameMatcher[];
  /** gRFC A101: `sni`, when not empty: the SNI to send unless `autoHostSni` gives one. */
  readonly sni?: string;
  /** A101: send the endpoint's hostname (EDS `hostname`, a logical DNS name) as the SNI. */
  readonly autoHostSni?: true;
  /** A101: check the server certificate's DNS SANs against the SNI sent, not the matchers. */
  readonly autoSniSanValidation?: true;
}

/**
 * Which fields of the backends' ORCA per-call load reports go into LRS load reports (gRFC A85's
 * `lrs_report_endpoint_metrics`). Named metrics are reported as `named_metrics.<key>`.
 */
export interface BackendMetricPropagation {
  /** `cpu_utilization`: into UpstreamLocalityStats.cpu_utilization. */
  readonly cpuUtilization: boolean;
  /** `mem_utilization`: into UpstreamLocalityStats.mem_utilization. */
  readonly memUtilization: boolean;
  /** `application_utilization`: into UpstreamLocalityStats.application_utilization. */
  readonly applicationUtilization: boolean;
  /** `named_metrics.*`: every entry of `named_metrics`. */
  readonly allNamedMetrics: boolean;
  /** The keys of `named_metrics.<key>` entries, sorted; empty with `allNamedMetrics`. */
  readonly namedMetrics: readonly string[];
}

interface ClusterUpdateBase {
  readonly name: string;
  /**
   * Where to report load (LRS): `lrs_server: {self: {}}` means the xDS server that sent this
   * cluster. Undefined: no load reporting.
   */
  readonly lrsServer: XdsServerConfig | undefined;
  /** `circuit_breakers`: the first DEFAULT-priority threshold's `max_requests`; default 1024. */
  readonly maxConcurrentRequests: number;
  readonly lbPolicy: LbPolicy;
  /** Undefined: outlier detection is off. */
  readonly outlierDetection: OutlierDetection | undefined;
  /** Undefined: plaintext (no `transport_socket`). */
  readonly security: UpstreamTlsConfig | undefined;
  /**
   * gRFC A55: `common_lb_config.override_host_status`, the EDS health statuses in which a
   * session's endpoint is still used; the other statuses are ignored. Unset: UNKNOWN and HEALTHY.
   */
  readonly overrideHostStatus: readonly OverrideHostStatus[];
  /**
   * `metadata` by key (gRFC A83: the GCP authentication filter reads its audience here);
   * absent when the Cluster has none.
   */
  readonly metadata?: ReadonlyMap<string, ClusterMetadataValue>;
  /**
   * `lrs_report_endpoint_metrics` (gRFC A85); absent when it selects nothing: load reports then
   * carry no backend metrics.
   */
  readonly backendMetricPropagation?: BackendMetricPropagation;
  /**
   * gRFC A86: `transport_socket` is an Http11ProxyUpstreamTransport, so endpoints whose EDS
   * metadata names a proxy are reached through it with HTTP CONNECT (`security` is then the
   * socket it wraps). Absent otherwise.
   */
  readonly httpConnect?: true;
}

/** The health statuses stateful session affinity can keep using (gRFC A55). */
export type OverrideHostStatus = 'UNKNOWN' | 'HEALTHY' | 'DRAINING';

export interface EdsClusterUpdate extends ClusterUpdateBase {
  readonly type: 'EDS';
  /** The ClusterLoadAssignment to watch; undefined means the cluster's own name. */
  readonly edsServiceName: string | undefined;
}

export interface LogicalDnsClusterUpdate extends ClusterUpdateBase {
  readonly type: 'LOGICAL_DNS';
  /** `host:port` (IPv6 literals in brackets), to resolve with DNS (gRFC A37). */
  readonly dnsHostname: string;
}

export interface AggregateClusterUpdate extends ClusterUpdateBase {
  readonly type: 'AGGREGATE';
  /** Child cluster names, highest priority first; never empty (gRFC A37). */
  readonly prioritizedClusterNames: readonly string[];
}

/** A validated Cluster. Narrow on `type` to reach the variant's fields. */
export type ClusterUpdate = EdsClusterUpdate | LogicalDnsClusterUpdate | AggregateClusterUpdate;

/** The `max_requests` used when a cluster sets none (gRPC's default). */
export const DEFAULT_MAX_CONCURRENT_REQUESTS = 1024;
