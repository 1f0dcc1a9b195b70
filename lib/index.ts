// The public surface of xds-client. Everything not exported here (or from xds-client/testing)
// is internal and may change without notice.
export { status } from '@grpc/grpc-js';

export { XdsClient } from './xds-client';
export { DEFAULT_RESOURCE_TIMEOUT_MS } from './client/core/client-core';
export type { XdsClientOptions, ResourceDump } from './client/core/client-core';
export type { ResourceStatus } from './client/cache/resource-state';
export { addCsdsService, type CsdsClients } from './csds';
export type { ResourceWatcher, WatchHandle } from './client/cache/resource-watcher';
export { XdsError, isXdsError } from './errors';
export type { FieldError, XdsErrorOptions } from './errors';
export type {
  XdsClientEvents,
  RequestEvent,
  ResponseEvent,
  AckEvent,
  NackEvent,
  ConnectedEvent,
  DisconnectedEvent,
  FallbackEvent,
} from './client/core/events';
export type { BackoffOptions } from './client/transport/backoff';
export type {
  XdsTransport,
  XdsTransportFactory,
  AdsCall,
  AdsCallHandlers,
} from './client/transport/transport';

export { loadBootstrap } from './bootstrap';
export type {
  Bootstrap,
  BootstrapSources,
  XdsServerConfig,
  XdsApiType,
  ChannelCredsConfig,
  ChannelCredsType,
  NodeConfig,
  LocalityConfig,
  AuthorityConfig,
} from './bootstrap';
export type { CertificateProviderConfig, FileWatcherConfig } from './bootstrap';

// Resource types and their updates. Named one by one: the resource modules also export
// helpers for the library's own use (validators, regex and domain checks) that are not public.
export type {
  ResourceType,
  DecodeResult,
  DecodeContext,
  LbPolicyRegistry,
} from './resources/resource-type';
export { ValidationErrors } from './validation-errors';
export { clusterResourceType, DEFAULT_MAX_CONCURRENT_REQUESTS } from './resources/cluster';
export type {
  AggregateClusterUpdate,
  BackendMetricPropagation,
  CertificateProviderInstance,
  ClusterUpdate,
  EdsClusterUpdate,
  FailurePercentageEjection,
  LbPolicy,
  LogicalDnsClusterUpdate,
  OutlierDetection,
  SubjectAltNameMatcher,
  SuccessRateEjection,
  UpstreamTlsConfig,
} from './resources/cluster';
export type { ClusterMetadataValue, GcpAuthnConfig } from './resources/gcp-authn/update';
export { endpointResourceType } from './resources/endpoint';
export type {
  DropOverload,
  EndpointAddress,
  EndpointHealthStatus,
  EndpointUpdate,
  LbEndpoint,
  LocalityEndpoints,
  LocalityName,
} from './resources/endpoint';
export { listenerResourceType } from './resources/listener';
export type {
  HttpConnectionManagerConfig,
  HttpFilterConfig,
  ListenerUpdate,
} from './resources/listener';
export { routeConfigResourceType, findVirtualHost } from './resources/route-config';
export type {
  ClusterAction,
  FaultAbort,
  FaultDelay,
  FaultInjectionConfig,
  FaultPercentage,
  FilterOverride,
  FilterOverrides,
  ForwardingSettings,
  HashPolicy,
  HeaderMatch,
  PathMatch,
  RetryOnCode,
  RetryPolicy,
  Route,
  RouteAction,
  RouteConfigUpdate,
  RouteMatch,
  VirtualHost,
  WeightedCluster,
  WeightedClustersAction,
} from './resources/route-config';

export {
  watchClusterTree,
  MAX_AGGREGATE_CLUSTER_DEPTH,
  ClusterResolver,
  DEFAULT_DNS_REFRESH_INTERVAL_MS,
  watchClusterEndpoints,
} from './clusters';
export type {
  DiscoveryMechanism,
  ClusterTreeUpdate,
  ClusterTreeHandle,
  ClusterTreeListener,
  ClusterTreeOptions,
  Priority,
  ClusterResolverListener,
  ClusterResolverOptions,
  DnsResolver,
  ClusterEndpointsHandle,
  ClusterEndpointsListener,
  ClusterEndpointsOptions,
} from './clusters';
