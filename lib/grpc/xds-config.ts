// What the resolver hands grpc-js's LB policies: one complete, consistent configuration for a
// channel (gRFC A74's XdsConfig), replaced whole on every change.

import type { NodeConfig } from '../bootstrap';
import type { CertificateProviderConfig } from '../bootstrap';
import type { DiscoveryMechanism, Priority } from '../clusters';
import type { XdsError } from '../errors';
import type { ClusterUpdate } from '../resources/cluster';
import type { ListenerUpdate } from '../resources/listener';
import type { RouteConfigUpdate, VirtualHost } from '../resources/route-config';

export interface XdsConfig {
  readonly listener: ListenerUpdate;
  readonly routeConfig: RouteConfigUpdate;
  /** The virtual host for the channel's data-plane authority (its `:authority`). */
  readonly virtualHost: VirtualHost;
  /**
   * Every cluster the routes and in-flight RPCs need, and every leaf of their aggregate trees:
   * a configuration, or why there is none (the RPCs to it fail; others go on, A74).
   */
  readonly clusters: ReadonlyMap<string, ClusterResult>;
  /** The clusters the routes name or in-flight RPCs hold: the cluster manager's children. */
  readonly rootClusters: readonly string[];
  /** The xDS node id, named by the errors RPCs see (decision 0030). */
  readonly nodeId: string;
  /** The bootstrap's node: what load reports (LRS) name as their sender. */
  readonly node: NodeConfig;
  /** The bootstrap's certificate provider instances, for clusters' TLS settings (gRFC A29). */
  readonly certificateProviders: ReadonlyMap<string, CertificateProviderConfig>;
}

export type ClusterResult =
  | { readonly ok: true; readonly value: ClusterConfig }
  | { readonly ok: false; readonly error: XdsError };

export type ClusterConfig =
  /** gRFC A75: a priority of `cds` children, one per leaf (depth-first, deduplicated). */
  | {
      readonly type: 'aggregate';
      readonly cluster: ClusterUpdate;
      readonly leafClusters: readonly string[];
    }
  /** An EDS or logical DNS cluster with its endpoints, in priorities with stable names. */
  | {
      readonly type: 'leaf';
      readonly cluster: ClusterUpdate;
      readonly mechanism: DiscoveryMechanism;
      /** Highest first. A mechanism with no endpoints yet is one priority with no localities. */
      readonly priorities: readonly Priority[];
      /** Why there are no endpoints, when there are none (for the RPC error). */
      readonly resolutionNote?: string;
    };
