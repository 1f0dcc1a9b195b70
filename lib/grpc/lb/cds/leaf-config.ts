// The LB configuration below one leaf cluster (gRFC A37, A52, A55, A74, A75): cluster_impl over
// override_host (A55: a session's endpoint first; DRAINING endpoints reach it, marked, and no
// further; left out when the channel has no sessions and the cluster no DRAINING endpoint,
// decision 0084) over a priority of the cluster's priorities, each with its locality policy —
// weighted_target over the localities for `wrr_locality`, else the endpoint policy over all of
// them (ring_hash: one ring over every locality, A42) — and the endpoints, each placed under its
// [priority, locality] path with its A113 weight.

import { experimental } from '@grpc/grpc-js';
import { errorReason } from '../../../errors';
import type { Priority } from '../../../clusters';
import type { LbPolicy } from '../../../resources/cluster';
import type { LbEndpoint, LocalityName } from '../../../resources/endpoint';
import type { ClusterConfig } from '../../xds-config';
import { ClusterImplConfig } from '../cluster-impl/cluster-impl';
import { withPath } from '../common/hierarchy';
import { withHostname } from '../common/endpoint-hostname';
import { withLocality } from '../common/locality-subchannel';
import { normalizedWeights } from './endpoint-weights';
import { healthStatusOf, OverrideHostConfig, withHealthStatus } from '../override-host/config';
import { withHttpProxy } from '../../http-connect';
import { LeastRequestConfig } from '../least-request/least-request';
import { PickFirstWeightedConfig } from '../pick-first-weighted/pick-first-weighted';
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

/** gRFC A27: only these take traffic; A55: DRAINING ones still serve their sessions. */
const USABLE = new Set(['UNKNOWN', 'HEALTHY', 'DRAINING']);

/** Endpoints that can take new RPCs (DRAINING ones only serve their sessions). */
function takingNewRpcs(endpoints: readonly Endpoint[], from: number): number {
  let n = 0;
  for (let i = from; i < endpoints.length; i++) {
    if (healthStatusOf(endpoints[i]!) !== 'DRAINING') n++;
  }
  return n;
}

/**
 * `sessions`: the channel's Listener has a stateful session filter (A55), whose RPCs may name
 * an endpoint for override_host.
 */
export function leafConfig(leaf: LeafCluster, sessions: boolean): LeafConfigResult {
  const { cluster, mechanism, priorities } = leaf;
  const endpoints: Endpoint[] = [];
  const children: { name: string; config: TypedConfig; ignoreReresolutionRequests: boolean }[] = [];
  for (const priority of priorities) {
    const before = endpoints.length;
    const child =
      mechanism.type === 'LOGICAL_DNS'
        ? logicalDnsChild(priority, mechanism.dnsHostname, endpoints)
        : edsChild(priority, mechanism.lbPolicy ?? cluster.lbPolicy, endpoints);
    if ('error' in child) return { error: `cluster "${cluster.name}": ${child.error}` };
    // A priority with nothing to connect to is failed over at once (A37): as a child it would
    // sit IDLE once its endpoint policy gives up, and A56 would wait on it.
    if (takingNewRpcs(endpoints, before) === 0) continue;
    children.push({
      name: priority.name,
      config: child.config,
      ignoreReresolutionRequests: priority.ignoreReresolutionRequests,
    });
  }
  if (takingNewRpcs(endpoints, 0) === 0) {
    const why = leaf.resolutionNote ?? 'the xDS server sent none';
    return { error: `cluster "${cluster.name}" has no usable endpoints: ${why}` };
  }
  const first = priorities[0];
  const priority = new PriorityConfig(children);
  // override_host has work only for sessions and DRAINING endpoints (it holds those back from
  // the policies below, and may keep their connections): without either, it passes every pick
  // through, and the channel does without it (decision 0084).
  const overrideHost =
    sessions || endpoints.some((e) => healthStatusOf(e) === 'DRAINING')
      ? new OverrideHostConfig(cluster.overrideHostStatus, priority)
      : priority;
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
    overrideHost,
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

/**
 * A37: one pick_first over every address the name resolved to, as one endpoint; each address
 * carries the name resolved, port included, as its hostname (A81).
 */
function logicalDnsChild(
  priority: Priority,
  hostname: string | undefined,
  out: Endpoint[],
): { config: TypedConfig } {
  const addresses = priority.localities.flatMap((l) =>
    l.endpoints.map((e) => withHostname(socketAddress(e), hostname)),
  );
  if (addresses.length > 0) out.push(withPath({ addresses }, [priority.name]));
  return { config: experimental.parseLoadBalancingConfig({ pick_first: {} }) };
}

function edsChild(
  priority: Priority,
  policy: LbPolicy,
  out: Endpoint[],
): { config: TypedConfig } | { error: string } {
  const localities = priority.localities.map((l) => ({ ...l, endpoints: usable(l.endpoints) }));
  // gRFC A113: the locality's share times the endpoint's, for policies that weigh endpoints.
  const weights = normalizedWeights(localities);
  if (policy.name === 'wrr_locality' && localities.length > 1) {
    const endpointPolicy = endpointPolicyConfig(policy.child);
    if ('error' in endpointPolicy) return endpointPolicy;
    const targets = localities.map((l, i) => {
      const name = localityName(l.locality);
      l.endpoints.forEach((e, j) => {
        out.push(withPath(endpointOf(e, l.locality, weights[i]![j]!), [priority.name, name]));
      });
      return { name, weight: l.weight, config: endpointPolicy.config };
    });
    return { config: new WeightedTargetConfig(targets) };
  }
  // A priority of one locality has its endpoint policy without weighted_target above it: a
  // weighted_target of one target picks it every time and reports its state (decision 0083).
  const endpointPolicy = endpointPolicyConfig(
    policy.name === 'wrr_locality' ? policy.child : policy,
  );
  if ('error' in endpointPolicy) return endpointPolicy;
  // One endpoint policy over all localities (ring_hash's one ring, A42), or over the one.
  localities.forEach((l, i) => {
    l.endpoints.forEach((e, j) => {
      out.push(withPath(endpointOf(e, l.locality, weights[i]![j]!), [priority.name]));
    });
  });
  return endpointPolicy;
}

/** The grpc-js policy for a cluster's endpoint-picking policy. */
function endpointPolicyConfig(policy: LbPolicy): { config: TypedConfig } | { error: string } {
  switch (policy.name) {
    case 'round_robin':
      return { config: experimental.parseLoadBalancingConfig({ round_robin: {} }) };
    case 'pick_first':
      // A113: shuffled by weight, by our policy (grpc-js's shuffle never puts the second first).
      return policy.shuffleAddressList
        ? { config: new PickFirstWeightedConfig() }
        : { config: experimental.parseLoadBalancingConfig({ pick_first: {} }) };
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
 * endpoint's locality (load reports count RPCs per locality), hostname (A81) and A86 proxy
 * (cluster_impl uses it if the cluster says so), and with what ring_hash and the weighted
 * pick_first read: its A113 weight and its A76 hash key.
 */
function endpointOf(e: LbEndpoint, locality: LocalityName, weight: number): RingHashEndpoint {
  const addresses = [socketAddress(e), ...(e.additionalAddresses ?? []).map(socketAddress)];
  const endpoint: RingHashEndpoint = {
    ...withHealthStatus(
      {
        addresses: addresses.map((a) =>
          withHttpProxy(withHostname(withLocality(a, locality), e.hostname), e.proxyAddress),
        ),
      },
      e.healthStatus,
    ),
    xdsClientWeight: weight,
  };
  return e.hashKey === undefined ? endpoint : { ...endpoint, xdsClientHashKey: e.hashKey };
}

/** A readable, unique name for a locality within its priority. */
function localityName(l: LocalityName): string {
  return JSON.stringify({ region: l.region, zone: l.zone, sub_zone: l.subZone });
}
