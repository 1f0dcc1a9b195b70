// The validated, immutable form of an envoy.config.endpoint.v3.ClusterLoadAssignment. Watchers
// share one frozen object, so every field is readonly and no protobufjs message leaks through.

/** `envoy.config.core.v3.HealthStatus`, by name. Only UNKNOWN and HEALTHY take traffic. */
export type EndpointHealthStatus =
  'UNKNOWN' | 'HEALTHY' | 'UNHEALTHY' | 'DRAINING' | 'TIMEOUT' | 'DEGRADED';

/** Identifies a locality; two localities are the same when all three fields are equal. */
export interface LocalityName {
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
}

/** An IP address and port. */
export interface EndpointAddress {
  /** An IPv4 or IPv6 literal, as sent (IPv6 without brackets). */
  readonly address: string;
  /** In [0, 65535]: 0 (no port) is kept, as C-core and grpc-go keep it; nothing connects to it. */
  readonly port: number;
}

export interface LbEndpoint extends EndpointAddress {
  readonly healthStatus: EndpointHealthStatus;
  /** `load_balancing_weight`; default 1, never 0. */
  readonly weight: number;
  /** `endpoint.hostname`, when not empty (used for :authority rewriting). */
  readonly hostname?: string;
  /** More addresses of the same endpoint (gRFC A61 dual stack), when there are any. */
  readonly additionalAddresses?: readonly EndpointAddress[];
  /**
   * gRFC A76: `metadata.filter_metadata["envoy.lb"].hash_key`, when it is a non-empty string:
   * where ring hash places the endpoint, instead of by its address.
   */
  readonly hashKey?: string;
  /**
   * gRFC A86: the HTTP CONNECT proxy to reach this endpoint through, from the endpoint's
   * metadata or else its locality's (`envoy.http11_proxy_transport_socket.proxy_address`, an
   * Address). Used only by a Cluster whose transport socket is Http11ProxyUpstreamTransport.
   */
  readonly proxyAddress?: EndpointAddress;
}

export interface LocalityEndpoints {
  readonly locality: LocalityName;
  /** `load_balancing_weight`, at least 1 (localities with weight 0 or none are dropped). */
  readonly weight: number;
  /** In the order sent. May be empty. */
  readonly endpoints: readonly LbEndpoint[];
}

export interface DropOverload {
  readonly category: string;
  /** The drop probability per million requests, in [0, 1000000]. */
  readonly requestsPerMillion: number;
}

/** A validated ClusterLoadAssignment. */
export interface EndpointUpdate {
  readonly clusterName: string;
  /**
   * `priorities[p]` holds the localities of priority p (0 is the highest), in the order sent.
   * Contiguous from 0 and each non-empty; empty when the assignment has no usable locality.
   */
  readonly priorities: readonly (readonly LocalityEndpoints[])[];
  readonly dropOverloads: readonly DropOverload[];
}
