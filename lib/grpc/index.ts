// xds-client/grpc: RPCs through xDS for grpc-js. `register()` once, then create channels and
// clients for `xds:///service` targets as usual. Everything exported here is public and
// documented in docs/grpc.md.
export { register } from './register';
export type { OptionalLabel, TelemetryOptions } from './telemetry/options';
export { grpcTraceBinPropagator } from './telemetry/grpc-trace-bin';
export {
  clientTelemetryInterceptor,
  type ClientTelemetryInterceptorOptions,
} from './telemetry/client-interceptor';
export { serverTelemetryInterceptor } from './telemetry/server-interceptor';
export { BOOTSTRAP_OPTION, RESOURCE_TIMEOUT_OPTION } from './names';
export { RING_SIZE_CAP_OPTION } from './names';
export { XdsServer, type ServingStatus, type XdsServerOptions } from './server/xds-server';
export { XdsChannelCredentials, XdsServerCredentials } from './xds-credentials';
export {
  registerAuditLoggerFactory,
  type AuditEvent,
  type AuditLogger,
  type AuditLoggerFactory,
} from '../resources/rbac/audit-loggers';
