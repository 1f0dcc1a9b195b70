// The stateful session filter (gRFC A55): its config types, for the grpc plugin.
export type { SessionCookie, StatefulSessionConfig } from './update';
export { STATEFUL_SESSION_FILTER_TYPE, STATEFUL_SESSION_PER_ROUTE_TYPE } from './validate';
