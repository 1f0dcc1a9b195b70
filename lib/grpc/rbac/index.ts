// gRFC A41 for XdsServer: the RBAC engine and how a server applies its RBAC filters.
export { RbacEngine, type RbacDecision } from './engine';
export { rbacHeaderValue, type RbacRequest } from './request';
export { peerIdentity, principalNames, type PeerIdentity } from './peer-identity';
export { checkRbac, rbacConfigsFor, rbacRequestOf } from './server-filter';
