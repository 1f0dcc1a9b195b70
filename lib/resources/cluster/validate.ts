// envoy.config.cluster.v3.Cluster -> ClusterUpdate, or every problem found (gRFC A27, A37, A47,
// A50, A52, A29). One pass records all errors under snake_case field paths; the update is built
// only when there are none. Rules and sources: docs/resources/cluster.md.
import type { XdsServerConfig } from '../../bootstrap';
import type {
  Cluster,
  ClusterLoadAssignment,
  ConfigSource,
  Endpoint,
  SocketAddress,
} from '../../generated/protos';
import { Cluster_DiscoveryType, HealthStatus, RoutingPriority } from '../../generated/protos';
import { isAdsOrSelf } from '../common';
import type { DecodeContext } from '../resource-type';
import { clusterMetadata } from '../gcp-authn/validate';
import type { ValidationErrors } from '../../validation-errors';
import { readTypedConfig, typeUrlOf } from '../any';
import { AGGREGATE_CLUSTER_LB_POLICY, clusterLbPolicy } from './lb-policy';
import { backendMetricPropagation } from './backend-metrics';
import { outlierDetection } from './outlier-detection';
import { upstreamTransport } from './security';
import {
  buildClusterUpdate,
  DEFAULT_OVERRIDE_HOST_STATUS,
  type ClusterVariant,
} from './build-update';
import {
  DEFAULT_MAX_CONCURRENT_REQUESTS,
  type ClusterUpdate,
  type OverrideHostStatus,
} from './update';

export const AGGREGATE_CLUSTER_TYPE_NAME = 'envoy.clusters.aggregate';
const AGGREGATE_CLUSTER_CONFIG = 'envoy.extensions.clusters.aggregate.v3.ClusterConfig' as const;
const AGGREGATE_CLUSTER_CONFIG_URL = typeUrlOf(AGGREGATE_CLUSTER_CONFIG);

// Enum members copied once: module-namespace getters are not free on this per-resource path.
const EDS = Cluster_DiscoveryType.EDS;
const LOGICAL_DNS = Cluster_DiscoveryType.LOGICAL_DNS;
const DEFAULT_PRIORITY = RoutingPriority.DEFAULT;

/** Validates a decoded Cluster: a frozen update, or undefined with the reasons in `errors`. */
export function validateCluster(
  cluster: Cluster,
  errors: ValidationErrors,
  context: DecodeContext,
): ClusterUpdate | undefined {
  if (cluster.name === '') errors.addAt('name', 'must be non-empty');
  const variant = discoveryType(cluster, errors);
  const lbPolicy =
    variant?.type === 'AGGREGATE'
      ? AGGREGATE_CLUSTER_LB_POLICY
      : clusterLbPolicy(cluster, errors, context.lbPolicies);
  const lrsServer = lrs(cluster.lrsServer, errors, context.server);
  const od = cluster.outlierDetection;
  const outlier =
    od === null ? undefined : errors.field('outlier_detection', () => outlierDetection(od, errors));
  const socket = cluster.transportSocket;
  const transport =
    socket === null
      ? undefined
      : errors.field('transport_socket', () =>
          upstreamTransport(socket, errors, context.certificateProviders),
        );
  const metadata =
    cluster.metadata === null ? undefined : clusterMetadata(cluster.metadata, errors);
  if (!errors.isEmpty || variant === undefined || lbPolicy === undefined) return undefined;
  return buildClusterUpdate(cluster.name, variant, {
    lrsServer,
    maxConcurrentRequests: maxConcurrentRequests(cluster),
    lbPolicy,
    outlierDetection: outlier,
    security: transport?.security,
    overrideHostStatus: overrideHostStatus(cluster),
    metadata,
    httpConnect: transport?.httpConnect === true,
    backendMetricPropagation: backendMetricPropagation(cluster.lrsReportEndpointMetrics),
  });
}

const OVERRIDE_HOST_STATUSES: Readonly<Record<number, OverrideHostStatus>> = {
  [HealthStatus.UNKNOWN]: 'UNKNOWN',
  [HealthStatus.HEALTHY]: 'HEALTHY',
  [HealthStatus.DRAINING]: 'DRAINING',
};

/**
 * `common_lb_config.override_host_status`: the statuses gRPC can override to, in enum order;
 * others are ignored, not NACKed (A55: mixed deployments). An empty set turns overriding off.
 */
function overrideHostStatus(cluster: Cluster): readonly OverrideHostStatus[] {
  const set = cluster.commonLbConfig?.overrideHostStatus;
  if (!set) return DEFAULT_OVERRIDE_HOST_STATUS;
  const kept = new Set<OverrideHostStatus>();
  for (const status of [...set.statuses].sort((a, b) => a - b)) {
    const name = OVERRIDE_HOST_STATUSES[status];
    if (name) kept.add(name);
  }
  return Object.freeze([...kept]);
}

function discoveryType(cluster: Cluster, errors: ValidationErrors): ClusterVariant | undefined {
  // The generated decoder sets the discriminator as it reads the member: a plain property.
  const kind = cluster.clusterDiscoveryType;
  if (kind === 'clusterType') return aggregate(cluster, errors);
  if (kind !== 'type') {
    // Unset means STATIC in Envoy, which gRPC does not support; say what is missing instead.
    errors.addAt('type', 'field not present');
    return undefined;
  }
  switch (cluster.type) {
    case EDS:
      return eds(cluster, errors);
    case LOGICAL_DNS: {
      const assignment = cluster.loadAssignment;
      if (assignment === null) {
        errors.addAt('load_assignment', 'field not present');
        return undefined;
      }
      return errors.field('load_assignment', () => logicalDns(assignment, errors));
    }
    default: {
      const value = cluster.type ?? 0;
      errors.addAt('type', `unsupported value ${Cluster_DiscoveryType[value] ?? value}`);
      return undefined;
    }
  }
}

function eds(cluster: Cluster, errors: ValidationErrors): ClusterVariant | undefined {
  const config = cluster.edsClusterConfig;
  if (config === null) {
    errors.addAt('eds_cluster_config', 'field not present');
    return undefined;
  }
  return errors.field('eds_cluster_config', () => {
    const before = errors.count;
    if (config.edsConfig === null) errors.addAt('eds_config', 'field not present');
    else if (!isAdsOrSelf(config.edsConfig)) errors.addAt('eds_config', 'must be ADS or self');
    // A47: an xdstp: cluster name is not a valid EDS resource name, so the service name must
    // say which ClusterLoadAssignment to fetch.
    if (config.serviceName === '' && cluster.name.startsWith('xdstp:')) {
      errors.addAt('service_name', 'must be non-empty for an xdstp: cluster name');
    }
    if (errors.count !== before) return undefined;
    const service = config.serviceName;
    // Istio names the service after the cluster: keep one string, not two equal copies.
    const edsServiceName =
      service === '' ? undefined : service === cluster.name ? cluster.name : service;
    return { type: 'EDS', edsServiceName };
  });
}

/** A37: exactly one locality with exactly one endpoint whose socket address names the host. */
function logicalDns(
  assignment: ClusterLoadAssignment,
  errors: ValidationErrors,
): ClusterVariant | undefined {
  return errors.field('endpoints', () => {
    if (assignment.endpoints.length !== 1) {
      errors.add(`exactly one locality required, got ${assignment.endpoints.length}`);
      return undefined;
    }
    const lbEndpoints = assignment.endpoints[0]!.lbEndpoints;
    return errors.index(0, () =>
      errors.field('lb_endpoints', () => {
        if (lbEndpoints.length !== 1) {
          errors.add(`exactly one endpoint required, got ${lbEndpoints.length}`);
          return undefined;
        }
        const endpoint = lbEndpoints[0]!.endpoint;
        return errors.index(0, () => errors.field('endpoint', () => dnsEndpoint(endpoint, errors)));
      }),
    );
  });
}

function dnsEndpoint(
  endpoint: Endpoint | null,
  errors: ValidationErrors,
): ClusterVariant | undefined {
  if (endpoint === null) {
    errors.add('field not present');
    return undefined;
  }
  if (endpoint.address === null) {
    errors.addAt('address', 'field not present');
    return undefined;
  }
  const socket = endpoint.address.socketAddress;
  return errors.field('address', () => {
    if (socket === null) {
      errors.addAt('socket_address', 'field not present');
      return undefined;
    }
    return errors.field('socket_address', () => dnsHostname(socket, errors));
  });
}

function dnsHostname(socket: SocketAddress, errors: ValidationErrors): ClusterVariant | undefined {
  const before = errors.count;
  if (socket.address === '') errors.addAt('address', 'must be non-empty');
  // A custom resolver cannot be honoured: DNS is the only resolver a LOGICAL_DNS cluster gets.
  if (socket.resolverName !== '') errors.addAt('resolver_name', 'field not supported');
  // Read through the oneof case: protobufjs leaves an unset port_value at 0, not null.
  const portKind = socket.portSpecifier;
  const port = portKind === 'portValue' ? socket.portValue : null;
  if (portKind === 'namedPort') errors.addAt('named_port', 'field not supported');
  else if (port === null) errors.addAt('port_value', 'field not present');
  else if (port < 1 || port > 65535) errors.addAt('port_value', 'must be in range [1, 65535]');
  if (errors.count !== before || port === null) return undefined;
  return { type: 'LOGICAL_DNS', dnsHostname: joinHostPort(socket.address, port) };
}

function aggregate(cluster: Cluster, errors: ValidationErrors): ClusterVariant | undefined {
  const custom = cluster.clusterType!;
  return errors.field('cluster_type', () => {
    // gRPC C-core keys on the type URL, grpc-go on the name: either one identifies an
    // aggregate cluster, so a control plane either peer accepts works here (issue 20).
    const typed = custom.typedConfig;
    const namedAggregate = custom.name === AGGREGATE_CLUSTER_TYPE_NAME;
    if (!namedAggregate && typed?.type_url !== AGGREGATE_CLUSTER_CONFIG_URL) {
      errors.addAt('name', `unsupported value ${custom.name === '' ? '""' : custom.name}`);
      return undefined;
    }
    // Named aggregate with a config of another type (or none): nothing to read.
    return readTypedConfig(typed, AGGREGATE_CLUSTER_CONFIG, errors, (config) =>
      errors.field('clusters', () => {
        if (config.clusters.length === 0) {
          errors.add('must be non-empty');
          return undefined;
        }
        const before = errors.count;
        config.clusters.forEach((name, i) => {
          if (name === '') errors.index(i, () => errors.add('must be non-empty'));
        });
        if (errors.count !== before) return undefined;
        return {
          type: 'AGGREGATE',
          prioritizedClusterNames: Object.freeze(config.clusters.slice()),
        } as const;
      }),
    );
  });
}

function lrs(
  source: ConfigSource | null,
  errors: ValidationErrors,
  server: XdsServerConfig,
): XdsServerConfig | undefined {
  if (source === null) return undefined;
  if (source.configSourceSpecifier !== 'self') {
    errors.addAt('lrs_server', 'must be self');
    return undefined;
  }
  return server;
}

/** The first DEFAULT-priority threshold decides, as in every gRPC implementation. */
function maxConcurrentRequests(cluster: Cluster): number {
  const thresholds = cluster.circuitBreakers?.thresholds ?? [];
  for (const threshold of thresholds) {
    if (threshold.priority === DEFAULT_PRIORITY) {
      return threshold.maxRequests?.value ?? DEFAULT_MAX_CONCURRENT_REQUESTS;
    }
  }
  return DEFAULT_MAX_CONCURRENT_REQUESTS;
}

/** `host:port`, bracketing IPv6 literals so the port stays unambiguous. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
