// xds-client/testing: a real ADS management server for tests, and helpers to describe its
// resources. Everything exported here is public and documented in docs/testing.md.
export {
  ManagementServer,
  type ManagementServerOptions,
  type ManagementServerTls,
  type SetResourceOptions,
  type StreamFault,
} from './management-server';
export { ADS_METHOD_PATH, type RawResource, type RawResponse } from './sotw-service';
export {
  DELTA_ADS_METHOD_PATH,
  type RawDeltaResource,
  type RawDeltaResponse,
} from './delta-service';
export {
  LRS_METHOD_PATH,
  type LoadReportingSettings,
  type RecordedClusterStats,
  type RecordedLoadReport,
  type RecordedLocalityStats,
  type RecordedMetricStats,
  type RecordedUnnamedMetricStats,
  type WaitForLoadReportOptions,
} from './lrs-service';
export type {
  RecordedDeltaRequest,
  RecordedNode,
  RecordedRequest,
  RecordedResponse,
  RecordedStream,
  WaitForRequestOptions,
  WaitOptions,
} from './recorder';
export type {
  AuthorityOptions,
  BootstrapAuthorityJson,
  BootstrapJson,
  BootstrapOptions,
  BootstrapServerJson,
  BootstrapCertificateProviderJson,
  FileWatcherOptions,
} from './bootstrap-json';
export {
  TestCertificateAuthority,
  spiffeTrustBundleMap,
  writeCertificateFiles,
  type CertificateFiles,
  type IssueOptions,
  type SubjectAltNames,
  type TestCertificate,
} from './certificates';
export {
  downstreamTlsTransportSocket,
  upstreamTlsTransportSocket,
  type DownstreamTlsOptions,
  type UpstreamTlsOptions,
} from './tls-resources';
export type { ResourceInput, ResourceJson } from './resource-store';
export { toMessageBytes, type EncodedResource, type ToMessageOptions } from './json-message';
export {
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
  resolveTypeUrl,
  type ResourceTypeAlias,
  type ResourceTypeName,
} from './resource-types';
export {
  aggregateCluster,
  edsCluster,
  endpoints,
  listener,
  logicalDnsCluster,
  rbacFilter,
  rbacPerRoute,
  routeConfig,
  serverListener,
  type EdsClusterOptions,
  type EndpointsLocalityInput,
  type JsonObject,
  type RouteConfigOptions,
  type ServerListenerOptions,
} from './resources';
