// The config of `xds_client.override_host` (gRFC A55's xds_override_host), and the EDS health
// status each endpoint carries down to it. leaf-config.ts puts the policy between cluster_impl and
// the cluster's priority policy, as C-core does, whether or not a session filter is configured:
// without sessions it only keeps DRAINING endpoints from the child.

import { experimental, type LoadBalancingConfig } from '@grpc/grpc-js';
import type { OverrideHostStatus } from '../../../resources/cluster';
import type { EndpointHealthStatus } from '../../../resources/endpoint';
import { POLICY } from '../../names';

type TypedConfig = experimental.TypedLoadBalancingConfig;
type Endpoint = experimental.Endpoint;

/** An endpoint marked with its EDS health status. */
type HealthEndpoint = Endpoint & { readonly xdsClientHealthStatus?: EndpointHealthStatus };

/** `endpoint` marked with `status` (a copy). */
export function withHealthStatus(endpoint: Endpoint, status: EndpointHealthStatus): Endpoint {
  return { ...endpoint, xdsClientHealthStatus: status } as HealthEndpoint;
}

/** An endpoint's EDS health status; UNKNOWN when unmarked (logical DNS). */
export function healthStatusOf(endpoint: Endpoint): EndpointHealthStatus {
  return (endpoint as HealthEndpoint).xdsClientHealthStatus ?? 'UNKNOWN';
}

const STATUSES: ReadonlySet<string> = new Set<OverrideHostStatus>([
  'UNKNOWN',
  'HEALTHY',
  'DRAINING',
]);

export class OverrideHostConfig implements TypedConfig {
  constructor(
    /** The cluster's override_host_status: the statuses in which a session's endpoint is used. */
    readonly overrideHostStatus: readonly OverrideHostStatus[],
    readonly child: TypedConfig,
  ) {}

  getLoadBalancerName(): string {
    return POLICY.overrideHost;
  }

  toJsonObject(): object {
    return {
      [POLICY.overrideHost]: {
        override_host_status: this.overrideHostStatus,
        child_policy: [this.child.toJsonObject()],
      },
    };
  }

  static createFromJson(obj: unknown): OverrideHostConfig {
    const o = (obj ?? {}) as Record<string, unknown>;
    const statuses = o.override_host_status ?? ['UNKNOWN', 'HEALTHY'];
    if (!Array.isArray(statuses) || !statuses.every((s) => STATUSES.has(s as string))) {
      throw new Error('override_host_status must list UNKNOWN, HEALTHY or DRAINING');
    }
    const child = Array.isArray(o.child_policy)
      ? experimental.selectLbConfigFromList(o.child_policy as LoadBalancingConfig[])
      : null;
    if (!child) throw new Error('no usable child_policy');
    return new OverrideHostConfig(statuses as OverrideHostStatus[], child);
  }
}
