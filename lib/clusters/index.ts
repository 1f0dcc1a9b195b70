// Aggregate and logical DNS clusters (gRFC A37): the cluster tree, the cluster resolver, the
// two joined, and the process-wide circuit-breaking counters.
export { watchClusterTree, MAX_AGGREGATE_CLUSTER_DEPTH } from './cluster-tree';
export type {
  DiscoveryMechanism,
  ClusterTreeUpdate,
  ClusterTreeHandle,
  ClusterTreeListener,
  ClusterTreeOptions,
} from './cluster-tree';
export { ClusterResolver, DEFAULT_DNS_REFRESH_INTERVAL_MS } from './cluster-resolver';
export type { Priority, ClusterResolverListener, ClusterResolverOptions } from './cluster-resolver';
export type { DnsResolver } from './logical-dns';
export { watchClusterEndpoints } from './watch-cluster-endpoints';
export type {
  ClusterEndpointsHandle,
  ClusterEndpointsListener,
  ClusterEndpointsOptions,
} from './watch-cluster-endpoints';
export { callCounter } from './circuit-breakers';
export type { CallCounter } from './circuit-breakers';
