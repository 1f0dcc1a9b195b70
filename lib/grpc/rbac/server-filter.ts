// The RBAC HTTP filters of a server's HttpConnectionManager, applied to one routed RPC (gRFC
// A41 on A36's routing): each RBAC filter in chain order, with the most specific override (A39:
// the route's, else the virtual host's, else the filter's own config). The first denial wins.
import type { Metadata, ServerInterceptingCallInterface } from '@grpc/grpc-js';
import type { HttpFilterConfig } from '../../resources/listener/update';
import type { RbacConfig } from '../../resources/rbac/update';
import type { Route, VirtualHost } from '../../resources/route-config';
import { RbacEngine, type RbacDecision } from './engine';
import type { RbacRequest } from './request';
import { peerIdentity } from './peer-identity';

/** The RBAC configs an RPC routed to `route` of `virtualHost` must pass, in filter order. */
export function rbacConfigsFor(
  filters: readonly HttpFilterConfig[],
  virtualHost: VirtualHost,
  route: Route,
): RbacConfig[] {
  const configs: RbacConfig[] = [];
  for (const filter of filters) {
    if (!filter.rbac) continue;
    const override =
      route.typedPerFilterConfig?.get(filter.name)?.rbac ??
      virtualHost.typedPerFilterConfig?.get(filter.name)?.rbac;
    configs.push(override ?? filter.rbac);
  }
  return configs;
}

/** Runs the configs in order; the first that denies decides. Never throws. */
export function checkRbac(configs: readonly RbacConfig[], request: RbacRequest): RbacDecision {
  for (const config of configs) {
    if (!config.rules) continue;
    let decision: RbacDecision;
    try {
      decision = RbacEngine.for(config.rules).decide(request);
    } catch (e) {
      // Only rules that bypassed validation get here; refusing is the safe answer.
      decision = { allowed: false, reason: `policy cannot be evaluated: ${String(e)}` };
    }
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
