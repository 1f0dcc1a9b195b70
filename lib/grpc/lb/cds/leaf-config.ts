// The LB configuration below one leaf cluster (gRFC A37, A52, A74, A75): cluster_impl over a
// priority of the cluster's priorities, each with its locality policy — weighted_target over
// the localities for `wrr_locality`, else the endpoint policy over all of them (ring_hash: one
// ring over every locality, A42) — and the endpoints, each placed under its [priority,
// locality] path.

import { experimental } from '@grpc/grpc-js';
import { errorReason } from '../../../errors';
import type { Priority } from '../../../clusters';
import type { LbPolicy } from '../../../resources/cluster';
import type { LbEndpoint, LocalityName } from '../../../resources/endpoint';
import type { ClusterConfig } from '../../xds-config';
import { ClusterImplConfig } from '../cluster-impl/cluster-impl';
import { withPath } from '../common/hierarchy';
import { withLocality } from '../common/locality-subchannel';
import { withHttpProxy } from '../../http-connect';
import { LeastRequestConfig } from '../least-request/least-request';
import {
  msToDuration,
  outlierDetectionAvailable,
  withOutlierDetection,
} from '../outlier-detection/outlier-detection';
import { PriorityConfig } from '../priority/priority';
import { RingHashConfig, type RingHashEndpoint } from '../ring-hash/config';
import { WeightedTargetConfig } from '../weighted-target/weighted-target';

type Endpoint = experimental.Endpoint;
type TypedConfig = experimental.TypedLoadBalancingConfig;
type LeafCluster = Extract<ClusterConfig, { type: 'leaf' }>;

export type LeafConfigResult =
  | {
      readonly config: TypedConfig;
      readonly endpoints: readonly Endpoint[];
      /** To add to the options the config is given with (outlier detection's child). */
      readonly attributes?: Readonly<Record<string, unknown>>;
    }
  | { readonly error: string };

/** gRFC A27: only these take traffic. */
const USABLE = new Set(['UNKNOWN', 'HEALTHY']);

export function leafConfig(leaf: LeafCluster): LeafConfigResult {
  const { cluster, mechanism, priorities } = leaf;
  const endpoints: Endpoint[] = [];
  const children: { name: string; config: TypedConfig; ignoreReresolutionRequests: boolean }[] = [];
  for (const priority of priorities) {
    const before = endpoints.length;
    const child =
      mechanism.type === 'LOGICAL_DNS'
        ? logicalDnsChild(priority, endpoints)
        : edsChild(priority, mechanism.lbPolicy ?? cluster.lbPolicy, endpoints);
    if ('error' in child) return { error: `cluster "${cluster.name}": ${child.error}` };
    // A priority with nothing to connect to is failed over at once (A37): as a child it would
    // sit IDLE once its endpoint policy gives up, and A56 would wait on it.
    if (endpoints.length === before) continue;
    children.push({
      name: priority.name,
      config: child.config,
      ignoreReresolutionRequests: priority.ignoreReresolutionRequests,
    });
  }
  if (endpoints.length === 0) {
    const why = leaf.resolutionNote ?? 'the xDS server sent none';
    return { error: `cluster "${cluster.name}" has no usable endpoints: ${why}` };
  }
  const first = priorities[0];
  const clusterImpl = new ClusterImplConfig(
    {
      cluster: cluster.name,
      edsServiceName: mechanism.edsServiceName,
      maxConcurrentRequests: mechanism.maxConcurrentRequests,
      dropCategories: first?.dropCategories ?? [],
      lrsServer: mechanism.lrsServer,
      security: cluster.security,
      backendMetrics: cluster.backendMetricPropagation,
      httpConnect: cluster.httpConnect === true,
    },
    new PriorityConfig(children),
  );
  // gRFC A50, at A75's place: above cluster_impl, over the whole cluster.
  const od = cluster.outlierDetection;
  if (od === undefined || !outlierDetectionAvailable()) return { config: clusterImpl, endpoints };
  try {
    return { ...withOutlierDetection(clusterImpl, od), endpoints };
  } catch (e) {
    return { error: `cluster "${cluster.name}": outlier_detection: ${errorReason(e)}` };
  }
}

/** A37: one pick_first over every address the name resolved to, as one endpoint. */
function logicalDnsChild(priority: Priority, out: Endpoint[]): { config: TypedConfig } {
  const addresses = priority.localities.flatMap((l) => l.endpoints.map(socketAddress));
  if (addresses.length > 0) out.push(withPath({ addresses }, [priority.name]));
  return { config: experimental.parseLoadBalancingConfig({ pick_first: {} }) };
}

function edsChild(
  priority: Priority,
  policy: LbPolicy,
  out: Endpoint[],
): { config: TypedConfig } | { error: string } {
  if (policy.name === 'wrr_locality') {
    const endpointPolicy = endpointPolicyConfig(policy.child);
    if ('error' in endpointPolicy) return endpointPolicy;
    const targets = priority.localities.map((l) => {
      const name = localityName(l.locality);
      for (const e of usable(l.endpoints)) {
        out.push(withPath(endpointOf(e, l.locality), [priority.name, name]));
      }
      return { name, weight: l.weight, config: endpointPolicy.config };
    });
    return { config: new WeightedTargetConfig(targets) };
  }
  const endpointPolicy = endpointPolicyConfig(policy);
  if ('error' in endpointPolicy) return endpointPolicy;
  for (const l of priority.localities) {
    for (const e of usable(l.endpoints)) {
      // A42: one ring over all localities, each endpoint weighted by its locality too.
      const endpoint =
        policy.name === 'ring_hash' ? weighted(e, l.locality, l.weight) : endpointOf(e, l.locality);
      out.push(withPath(endpoint, [priority.name]));
    }
  }
  return endpointPolicy;
}

/** The grpc-js policy for a cluster's endpoint-picking policy. */
function endpointPolicyConfig(policy: LbPolicy): { config: TypedConfig } | { error: string } {
  switch (policy.name) {
    case 'round_robin':
      return { config: experimental.parseLoadBalancingConfig({ round_robin: {} }) };
    case 'pick_first':
      return {
        config: experimental.parseLoadBalancingConfig({
          pick_first: { shuffleAddressList: policy.shuffleAddressList },
        }),
      };
    case 'ring_hash':
      return { config: new RingHashConfig(policy.minRingSize, policy.maxRingSize) };
    case 'least_request':
      return { config: new LeastRequestConfig(policy.choiceCount) };
    case 'client_side_weighted_round_robin':
      // gRFC A58, grpc-js's weighted_round_robin; its JSON field names.
      return parsedConfig('weighted_round_robin', {
        enable_oob_load_report: policy.enableOobLoadReport,
        oob_load_reporting_period: msToDuration(policy.oobReportingPeriodMs),
        blackout_period: msToDuration(policy.blackoutPeriodMs),
        weight_expiration_period: msToDuration(policy.weightExpirationPeriodMs),
        weight_update_period: msToDuration(policy.weightUpdatePeriodMs),
        error_utilization_penalty: policy.errorUtilizationPenalty,
      });
    case 'custom':
      // gRFC A52: a policy the application registered, with the TypedStruct's JSON.
      return parsedConfig(policy.policyName, policy.config);
    default:
      // Only wrr_locality gets here, nested where an endpoint policy belongs.
      return { error: `LB policy ${policy.name} cannot pick endpoints` };
  }
}

/** grpc-js's config for `{ [name]: json }`, or why it has none. */
function parsedConfig(name: string, json: object): { config: TypedConfig } | { error: string } {
  try {
    return { config: experimental.parseLoadBalancingConfig({ [name]: json }) };
  } catch (e) {
    return { error: `LB policy ${name}: ${errorReason(e)}` };
  }
}

function usable(endpoints: readonly LbEndpoint[]): LbEndpoint[] {
  return endpoints.filter((e) => USABLE.has(e.healthStatus));
}

function socketAddress(e: { address: string; port: number }): experimental.SubchannelAddress {
  return { host: e.address, port: e.port };
}

/**
 * An endpoint and its extra addresses (gRFC A61), in the order sent, each marked with the
 * endpoint's locality (load reports count RPCs per locality) and its A86 proxy (cluster_impl
 * uses it if the cluster says so), and with what ring_hash reads: its weight and its A76 hash
 * key.
 */
function endpointOf(e: LbEndpoint, locality: LocalityName): RingHashEndpoint {
  const addresses = [socketAddress(e), ...(e.additionalAddresses ?? []).map(socketAddress)];
  const endpoint: RingHashEndpoint = {
    addresses: addresses.map((a) => withHttpProxy(withLocality(a, locality), e.proxyAddress)),
    xdsClientWeight: e.weight,
  };
  return e.hashKey === undefined ? endpoint : { ...endpoint, xdsClientHashKey: e.hashKey };
}

/** The endpoint with its weight multiplied by its locality's (gRFC A42). */
function weighted(e: LbEndpoint, locality: LocalityName, localityWeight: number): RingHashEndpoint {
  return { ...endpointOf(e, locality), xdsClientWeight: e.weight * localityWeight };
}

/** A readable, unique name for a locality within its priority. */
function localityName(l: LocalityName): string {
  return JSON.stringify({ region: l.region, zone: l.zone, sub_zone: l.subZone });
}
