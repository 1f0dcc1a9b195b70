// The RBAC HTTP filters of a server's HttpConnectionManager, applied to one routed RPC (gRFC
// A41 on A36's routing): each RBAC filter in chain order, with the most specific override (A39:
// the route's, else the virtual host's, else the filter's own config). The first denial wins;
// each filter's decision is audited as its config asks (A59).
import type { Metadata, ServerInterceptingCallInterface } from '@grpc/grpc-js';
import type { HttpFilterConfig } from '../../resources/listener/update';
import type { RbacConfig } from '../../resources/rbac/update';
import type { Route, VirtualHost } from '../../resources/route-config';
import { RbacEngine, type RbacDecision } from './engine';
import type { RbacRequest } from './request';
import { auditDecision } from './audit';
import { peerIdentity, type PeerIdentity } from './peer-identity';

/** One RBAC filter as it applies to a route: its name (A59's policy name) and config. */
export interface RbacFilterUse {
  readonly name: string;
  readonly config: RbacConfig;
}

/** The RBAC configs an RPC routed to `route` of `virtualHost` must pass, in filter order. */
export function rbacConfigsFor(
  filters: readonly HttpFilterConfig[],
  virtualHost: VirtualHost,
  route: Route,
): RbacFilterUse[] {
  const configs: RbacFilterUse[] = [];
  for (const filter of filters) {
    if (!filter.rbac) continue;
    const override =
      route.typedPerFilterConfig?.get(filter.name)?.rbac ??
      virtualHost.typedPerFilterConfig?.get(filter.name)?.rbac;
    configs.push({ name: filter.name, config: override ?? filter.rbac });
  }
  return configs;
}

/**
 * Runs the filters in order; the first that denies decides. Each decision is audited as its
 * filter's `audit_logging_options` ask (A59). Never throws.
 */
export function checkRbac(filters: readonly RbacFilterUse[], request: RbacRequest): RbacDecision {
  for (const { name, config } of filters) {
    if (!config.rules) continue;
    let decision: RbacDecision;
    try {
      decision = RbacEngine.for(config.rules).decide(request);
    } catch (e) {
      // Only rules that bypassed validation get here; refusing is the safe answer.
      decision = { allowed: false, reason: `policy cannot be evaluated: ${String(e)}` };
    }
    auditDecision(config.rules.audit, {
      rpcMethod: request.path,
      principal: principalOf(request.peer),
      policyName: name,
      matchedRule: decision.matchedPolicy ?? '',
      authorized: decision.allowed,
    });
    if (!decision.allowed) return decision;
  }
  return { allowed: true };
}

/** The call as RBAC sees it. `tls`: the connection's port credentials are secure. */
export function rbacRequestOf(
  call: Pick<ServerInterceptingCallInterface, 'getHost' | 'getConnectionInfo' | 'getAuthContext'>,
  path: string,
  metadata: Metadata,
  tls: boolean,
): RbacRequest {
  const connection = call.getConnectionInfo();
  const auth = call.getAuthContext();
  return {
    path,
    authority: call.getHost(),
    metadata,
    localAddress: connection.localAddress,
    localPort: connection.localPort,
    remoteAddress: connection.remoteAddress,
    // grpc-js reports a TLS connection only when the client certificate was verified.
    tls: tls || auth.transportSecurityType !== undefined,
    peer: peerIdentity(auth.sslPeerCertificate),
  };
}

/** A59's principal: the certificate's first URI SAN, else its first DNS SAN, else its subject. */
function principalOf(peer: PeerIdentity | undefined): string {
  return peer?.uriSans[0] ?? peer?.dnsSans[0] ?? peer?.subject ?? '';
}
