// The names this plugin puts into grpc-js's process-wide registries and option maps.

/**
 * Our LB policies have names of their own: grpc-js's registry is one map per process, and
 * `@grpc/grpc-js-xds` registers `cds`, `priority`, `weighted_target`, … into it too. With
 * distinct names the two plugins can be loaded side by side (decision 0011).
 */
export const POLICY = {
  clusterManager: 'xds_client.cluster_manager',
  cds: 'xds_client.cds',
  priority: 'xds_client.priority',
  clusterImpl: 'xds_client.cluster_impl',
  weightedTarget: 'xds_client.weighted_target',
  ringHash: 'xds_client.ring_hash',
  /** gRFC A48's least_request (grpc-js has none). */
  leastRequest: 'xds_client.least_request',
  /** gRFC A113's pick_first: addresses shuffled by weight (grpc-js's shuffle is not). */
  pickFirstWeighted: 'xds_client.pick_first_weighted',
  /** Under grpc-js's `outlier_detection`: the cluster_impl config handed down (A50). */
  outlierDetectionChild: 'xds_client.outlier_detection_child',
  /** gRFC A55's xds_override_host: a session's endpoint first, below cluster_impl. */
  overrideHost: 'xds_client.override_host',
} as const;

/**
 * gRPC's own name for ring hash in a service config (grpc-go, grpc-java, C-core), registered
 * beside ours so that A76's `requestHashHeader` config works as it does there. grpc-js-xds
 * registers `ring_hash`, not this (decision 0049).
 */
export const GRPC_RING_HASH_POLICY = 'ring_hash_experimental';

/**
 * Channel option: the bootstrap for this channel's xDS client, as JSON text or an object
 * (prefer text: channel options also key grpc-js's subchannel pool, where objects compare by
 * identity). Without it the bootstrap comes from GRPC_XDS_BOOTSTRAP / _CONFIG.
 */
export const BOOTSTRAP_OPTION = 'xds_client.bootstrap';

/**
 * Channel option: the does-not-exist timer of this channel's xDS client, in ms (default
 * 15 000, gRFC A57). Channels share a client only when this matches too.
 */
export const RESOURCE_TIMEOUT_OPTION = 'xds_client.resource_timeout_ms';

/**
 * Resolver attributes reach every LB policy merged into its channel options. Keys with this
 * prefix are left out of subchannel arguments, so our objects never key the subchannel pool.
 */
const INTERNAL = 'grpc.internal.no_subchannel.xds_client';

/** Attribute: the current XdsConfig (see xds-config.ts). */
export const XDS_CONFIG_ATTRIBUTE = `${INTERNAL}.config`;
/** Attribute: the config below grpc-js's `outlier_detection` (lb/outlier-detection/outlier-detection.ts). */
export const OUTLIER_DETECTION_CHILD_ATTRIBUTE = `${INTERNAL}.outlier_detection_child`;
/**
 * Attribute: the channel's target and MeterProvider for A94's subchannel metrics
 * (telemetry/subchannel-metrics.ts), set by the resolver when a MeterProvider is configured.
 */
export const SUBCHANNEL_METRICS_ATTRIBUTE = `${INTERNAL}.subchannel_metrics`;

/**
 * Subchannel option: the cluster's TLS settings (a SubchannelSecurity, certificates/security.ts),
 * set by cluster_impl on the subchannels of a cluster with an UpstreamTlsContext (gRFC A29) and
 * read by XdsChannelCredentials. Unlike the attributes above, it must reach the subchannel: it
 * keys the subchannel pool, by identity, so one cluster's settings are one object.
 */
export const SECURITY_OPTION = 'xds_client.cluster_security';
/**
 * Subchannel option: the hostname of the subchannel's endpoint (EDS `hostname`, a logical DNS
 * cluster's name), set by cluster_impl beside SECURITY_OPTION when the cluster's
 * `auto_host_sni` asks for it (gRFC A101).
 */
export const ENDPOINT_HOSTNAME_OPTION = 'xds_client.endpoint_hostname';

/** Pick information key: the cluster_manager child an RPC goes to. */
export const PICK_CLUSTER = 'xds_client.cluster';
/** Pick information key: set instead of a cluster to fail the RPC at once with this message. */
export const PICK_FAILURE = 'xds_client.failure';
/**
 * Pick information key: the RPC's request hash (gRFC A42), a decimal unsigned 64-bit value;
 * absent when its route has no hash policies.
 */
export const PICK_HASH = 'xds_client.hash';
/**
 * Pick information key: the channel's authority, set when the RPC's route has
 * `auto_host_rewrite` (gRFC A81): a call with this authority gets the endpoint's hostname.
 */
export const PICK_AUTHORITY = 'xds_client.authority';

/**
 * Pick information key: the endpoint addresses of the RPC's session cookie (gRFC A55), `host:port`
 * joined by commas; absent when the RPC carries no session.
 */
export const PICK_OVERRIDE_HOST = 'xds_client.override_host';

/**
 * Channel option: the largest ring the ring_hash policy builds (default 4096, gRFC A42); a
 * cluster's larger minimum or maximum ring size is lowered to it. The name is gRPC's own.
 */
export const RING_SIZE_CAP_OPTION = 'grpc.lb.ring_hash.ring_size_cap';

/**
 * Subchannel option cluster_impl sets for a Cluster whose transport socket is the HTTP/1.1 proxy
 * (gRFC A86): the root policy then connects to the endpoint through its marked proxy. The swap
 * happens at the root, above grpc-js's outlier_detection, which knows endpoints by address.
 */
export const HTTP_CONNECT_OPTION = 'xds_client.http_connect';
