// Per-RPC routing for the grpc plugin's ConfigSelector: which cluster an RPC goes to, with what
// timeout, or why it fails. Rules: docs/grpc-routing.md.
export { RouteTable, type RouteDecision } from './route-table';
