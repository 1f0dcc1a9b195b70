// The public surface of xds-client. Everything not exported here (or from xds-client/testing)
// is internal and may change without notice.
export { status } from '@grpc/grpc-js';

export { XdsClient } from './xds-client';
export { XdsClientCore, DEFAULT_RESOURCE_TIMEOUT_MS } from './client/xds-client';
export type { XdsClientOptions, ResourceDump } from './client/xds-client';
export type { ResourceStatus } from './client/resource-state';
export type { ResourceWatcher, WatchHandle } from './client/resource-watcher';
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
} from './client/events';
export type { BackoffOptions } from './client/backoff';
export type {
  XdsTransport,
  XdsTransportFactory,
  AdsCall,
  AdsCallHandlers,
} from './client/transport';

export { loadBootstrap } from './bootstrap';
export type {
  Bootstrap,
  BootstrapSources,
  XdsServerConfig,
  ChannelCredsConfig,
  ChannelCredsType,
  NodeConfig,
  LocalityConfig,
  AuthorityConfig,
} from './bootstrap';

export type { ResourceType, DecodeResult, DecodeContext } from './resources/resource-type';
export { ValidationErrors } from './validation-errors';
export { clusterResourceType } from './resources/cluster';
export { endpointResourceType } from './resources/endpoint';
export { listenerResourceType } from './resources/listener';
export { routeConfigResourceType, findVirtualHost } from './resources/route-config';
export type * from './resources/cluster';
export type * from './resources/endpoint';
export type * from './resources/listener';
export type * from './resources/route-config';

export {
  watchClusterTree,
  MAX_AGGREGATE_CLUSTER_DEPTH,
  ClusterResolver,
  DEFAULT_DNS_REFRESH_INTERVAL_MS,
  watchClusterEndpoints,
  callCounter,
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
  CallCounter,
} from './clusters';
