// Whether a server serves one RPC (gRFC A36, A41): routed by its filter chain's
// HttpConnectionManager, only a route with a non_forwarding action is served (anything else
// fails with UNAVAILABLE), then the chain's RBAC filters may refuse it with PERMISSION_DENIED.
import {
  Metadata,
  ServerInterceptingCall,
  status,
  type ServerInterceptingCallInterface,
  type ServerInterceptor,
} from '@grpc/grpc-js';
import { isXdsError, XdsError } from '../../errors';
import type { ServerFilterChain } from '../../resources/listener/update';
import { findVirtualHost } from '../../resources/route-config';
import type { RouteResult } from '../listener-routes';
import { checkRbac, rbacConfigsFor, rbacRequestOf } from '../rbac';
import { RouteTable } from '../routing';

/** How an RPC is refused before it reaches the service. */
interface Refusal {
  readonly code: status;
  readonly details: string;
}

/** What admission reads of its port, at each RPC. */
export interface AdmissionContext {
  /** What RDS said of each RouteConfiguration the port's Listener names, now. */
  readonly routes: () => ReadonlyMap<string, RouteResult>;
  /** The xDS node id, named by every refusal (decision 0030). */
  readonly nodeId: string;
}

/** The interceptor of one filter chain's connections; `tls` says whether they use TLS. */
export function admissionInterceptor(
  chain: ServerFilterChain,
  tls: boolean,
  context: AdmissionContext,
): ServerInterceptor {
  return (method, call) =>
    new ServerInterceptingCall(call, {
      start: (next) => {
        next({
          onReceiveMetadata: (metadata, nextMetadata) => {
            let refusal: Refusal | undefined;
            try {
              refusal = refusalOf(chain, call, method.path, metadata, tls, context);
            } catch (e) {
              // Nothing may throw into grpc-js; an unexpected error refuses the RPC.
              refusal = { code: status.INTERNAL, details: `XdsServer: ${String(e)}` };
            }
            if (refusal === undefined) nextMetadata(metadata);
            else call.sendStatus({ ...refusal, metadata: new Metadata() });
          },
        });
      },
    });
}

/** Why an RPC is refused, or undefined to serve it. */
function refusalOf(
  chain: ServerFilterChain,
  call: ServerInterceptingCallInterface,
  path: string,
  metadata: Metadata,
  tls: boolean,
  context: AdmissionContext,
): Refusal | undefined {
  // gRFC A36: UNAVAILABLE, naming the node as every error the plugin reports does.
  const unavailable = (reason: string) => ({
    code: status.UNAVAILABLE,
    details: new XdsError(status.UNAVAILABLE, reason, { nodeId: context.nodeId }).message,
  });
  const hcm = chain.httpConnectionManager;
  let routeConfig = hcm.routeConfig;
  if (!routeConfig && hcm.routeConfigName !== undefined) {
    const result = context.routes().get(hcm.routeConfigName);
    if (result === undefined || isXdsError(result)) {
      const why = result ? `: ${result.reason}` : '';
      return unavailable(`RouteConfiguration ${hcm.routeConfigName} unavailable${why}`);
    }
    routeConfig = result;
  }
  if (!routeConfig) return unavailable('no route configuration');
  const host = call.getHost();
  const virtualHost = findVirtualHost(routeConfig.virtualHosts, host);
  if (!virtualHost) return unavailable(`no virtual host for authority ${JSON.stringify(host)}`);
  const found = RouteTable.for(virtualHost, undefined).match(path, metadata);
  if ('message' in found) return unavailable(found.message);
  if (found.route.action.type !== 'non_forwarding') {
    return unavailable(`${found.label}: a server serves only routes with a non_forwarding action`);
  }
  const rbac = rbacConfigsFor(hcm.httpFilters, virtualHost, found.route);
  if (rbac.length === 0) return undefined;
  const decision = checkRbac(rbac, rbacRequestOf(call, path, metadata, tls));
  return decision.allowed
    ? undefined
    : { code: status.PERMISSION_DENIED, details: `RBAC: ${decision.reason}` };
}
