// gRFC A41 for XdsServer: the RBAC engine and how a server applies its RBAC filters.
export { RbacEngine, rbacHeaderValue, type RbacDecision, type RbacRequest } from './engine';
export { peerIdentity, principalNames, type PeerIdentity } from './peer-identity';
export { checkRbac, rbacConfigsFor, rbacRequestOf } from './server-filter';
