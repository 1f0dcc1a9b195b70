// The per-type discovery services (the protocol document's "Basic xDS" and "Incremental xDS"):
// ListenerDiscoveryService, RouteDiscoveryService, ClusterDiscoveryService and
// EndpointDiscoveryService, each with its SotW and incremental method. The ManagementServer
// serves them with the same SotW and delta services as ADS, a stream limited to its type.
import type { ServiceDefinition } from '@grpc/grpc-js';
import { bidiMethod } from './grpc-method';
import {
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
} from './resource-types';

export interface PerTypeService {
  /** The full service name. */
  readonly service: string;
  readonly typeUrl: string;
  readonly sotwMethod: string;
  readonly deltaMethod: string;
}

export const PER_TYPE_SERVICES: readonly PerTypeService[] = [
  perType('envoy.service.listener.v3.ListenerDiscoveryService', LISTENER_TYPE_URL, 'Listeners'),
  perType('envoy.service.route.v3.RouteDiscoveryService', ROUTE_TYPE_URL, 'Routes'),
  perType('envoy.service.cluster.v3.ClusterDiscoveryService', CLUSTER_TYPE_URL, 'Clusters'),
  perType('envoy.service.endpoint.v3.EndpointDiscoveryService', ENDPOINT_TYPE_URL, 'Endpoints'),
];

function perType(service: string, typeUrl: string, plural: string): PerTypeService {
  return { service, typeUrl, sotwMethod: `Stream${plural}`, deltaMethod: `Delta${plural}` };
}

/** The grpc-js definition of one per-type service: its SotW and incremental methods. */
export function perTypeDefinition(entry: PerTypeService): ServiceDefinition {
  return {
    [entry.sotwMethod]: bidiMethod(
      `/${entry.service}/${entry.sotwMethod}`,
      'envoy.service.discovery.v3.DiscoveryRequest',
      'envoy.service.discovery.v3.DiscoveryResponse',
    ),
    [entry.deltaMethod]: bidiMethod(
      `/${entry.service}/${entry.deltaMethod}`,
      'envoy.service.discovery.v3.DeltaDiscoveryRequest',
      'envoy.service.discovery.v3.DeltaDiscoveryResponse',
    ),
  };
}
