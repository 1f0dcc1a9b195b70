// A Cluster's load-balancing policy: the `load_balancing_policy` field when set (gRFC A52),
// otherwise the legacy `lb_policy` enum with its `ring_hash_lb_config` /
// `least_request_lb_config`. Behaviour follows gRPC C-core's and grpc-go's xDS LB policy
// registries; docs/resources/cluster.md lists where they differ and what we chose.
import { typeNameOfUrl } from '../../codec';
import type {
  Any,
  Cluster,
  Duration,
  LoadBalancingPolicy,
  UInt32Value,
  UInt64Value,
} from '../../generated/protos';
import {
  Cluster_LbPolicy,
  Cluster_RingHashLbConfig_HashFunction,
  RingHash_HashFunction,
} from '../../generated/protos';
import { durationMs, int64ToNumber } from '../common';
import type { LbPolicyRegistry } from '../resource-type';
import type { ValidationErrors } from '../../validation-errors';
import { decodeAnyValue, typeUrlOf } from '../any';
import { EMPTY_CONFIG, structToJson } from '../struct';
import type { LbPolicy } from './update';

/** gRPC C-core's and grpc-go's limit on nested policy lists (wrr_locality inside wrr_locality). */
export const MAX_LB_POLICY_DEPTH = 16;
export const RING_SIZE_LIMIT = 8_388_608;
const DEFAULT_MIN_RING_SIZE = 1024;
const DEFAULT_CHOICE_COUNT = 2;
/** gRFC A48: larger choice counts are clamped, not rejected. */
const MAX_CHOICE_COUNT = 10;

// Enum members copied once: module-namespace getters are not free on this per-resource path.
const LEGACY_ROUND_ROBIN = Cluster_LbPolicy.ROUND_ROBIN;
const LEGACY_RING_HASH = Cluster_LbPolicy.RING_HASH;
const LEGACY_LEAST_REQUEST = Cluster_LbPolicy.LEAST_REQUEST;

const ROUND_ROBIN: LbPolicy = Object.freeze({ name: 'round_robin' });
/** The legacy ROUND_ROBIN enum means round robin within localities weighted across them. */
export const WRR_LOCALITY_ROUND_ROBIN: LbPolicy = Object.freeze({
  name: 'wrr_locality',
  child: ROUND_ROBIN,
});

/** grpc-js's name for gRFC A58's policy, which `ClientSideWeightedRoundRobin` becomes. */
export const WEIGHTED_ROUND_ROBIN_POLICY_NAME = 'weighted_round_robin';

/**
 * gRFC A75: an aggregate cluster's own policy is never used (each child cluster brings its
 * own), so it is neither validated nor kept; its `lbPolicy` is this placeholder. Envoy's docs
 * write aggregates with `lb_policy: CLUSTER_PROVIDED`, which gRPC has no policy for.
 */
export const AGGREGATE_CLUSTER_LB_POLICY: LbPolicy = WRR_LOCALITY_ROUND_ROBIN;

const POLICY_URL = {
  roundRobin: typeUrlOf('envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin'),
  ringHash: typeUrlOf('envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash'),
  leastRequest: typeUrlOf('envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest'),
  pickFirst: typeUrlOf('envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst'),
  wrrLocality: typeUrlOf('envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality'),
  clientSideWrr: typeUrlOf(
    'envoy.extensions.load_balancing_policies.client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin',
  ),
  xdsTypedStruct: typeUrlOf('xds.type.v3.TypedStruct'),
  udpaTypedStruct: typeUrlOf('udpa.type.v1.TypedStruct'),
};

/**
 * The cluster's policy, or undefined after recording errors. A52: when `load_balancing_policy`
 * is present the legacy fields are ignored entirely, even if they hold unsupported values.
 * `registry` says which policies outside this library's own exist where the cluster is used
 * (custom `TypedStruct` policies, `weighted_round_robin`); without one, custom ones are skipped.
 */
export function clusterLbPolicy(
  cluster: Cluster,
  errors: ValidationErrors,
  registry?: LbPolicyRegistry,
): LbPolicy | undefined {
  if (cluster.loadBalancingPolicy !== null) {
    const policy = cluster.loadBalancingPolicy;
    return errors.field('load_balancing_policy', () =>
      convertPolicyList(policy, 0, errors, registry),
    );
  }
  switch (cluster.lbPolicy) {
    case LEGACY_ROUND_ROBIN:
      return WRR_LOCALITY_ROUND_ROBIN;
    case LEGACY_RING_HASH: {
      const config = cluster.ringHashLbConfig;
      if (config === null) return ringHash(null, null, errors);
      return errors.field('ring_hash_lb_config', () => {
        if (config.hashFunction !== Cluster_RingHashLbConfig_HashFunction.XX_HASH) {
          const name = Cluster_RingHashLbConfig_HashFunction[config.hashFunction];
          errors.addAt('hash_function', `unsupported value ${name ?? config.hashFunction}`);
        }
        return ringHash(config.minimumRingSize, config.maximumRingSize, errors);
      });
    }
    case LEGACY_LEAST_REQUEST: {
      // A48: least request within localities weighted across them, like ROUND_ROBIN.
      const config = cluster.leastRequestLbConfig;
      const child =
        config === null
          ? leastRequest(null, errors)
          : errors.field('least_request_lb_config', () => leastRequest(config.choiceCount, errors));
      return child === undefined ? undefined : Object.freeze({ name: 'wrr_locality', child });
    }
    default:
      errors.addAt(
        'lb_policy',
        `unsupported value ${Cluster_LbPolicy[cluster.lbPolicy] ?? cluster.lbPolicy}`,
      );
      return undefined;
  }
}

/** Marks a policy entry that gRPC does not know: A52 says try the next one. */
const SKIP = Symbol('skip');

/** A52: the first supported entry wins; an error in that entry fails the whole list. */
function convertPolicyList(
  list: LoadBalancingPolicy,
  depth: number,
  errors: ValidationErrors,
  registry: LbPolicyRegistry | undefined,
): LbPolicy | undefined {
  if (depth >= MAX_LB_POLICY_DEPTH) {
    errors.add(`exceeds maximum nesting depth ${MAX_LB_POLICY_DEPTH}`);
    return undefined;
  }
  return errors.field('policies', () => {
    for (let i = 0; i < list.policies.length; i++) {
      const extension = list.policies[i]!.typedExtensionConfig;
      const result = errors.index(i, () =>
        errors.field('typed_extension_config', () => {
          if (extension === null) {
            errors.add('field not present');
            return undefined;
          }
          const typed = extension.typedConfig;
          if (typed === null) {
            errors.addAt('typed_config', 'field not present');
            return undefined;
          }
          return errors.field('typed_config', () => convertPolicy(typed, depth, errors, registry));
        }),
      );
      if (result !== SKIP) return result;
    }
    errors.add('no supported load balancing policy');
    return undefined;
  });
}

function convertPolicy(
  typed: Any,
  depth: number,
  errors: ValidationErrors,
  registry: LbPolicyRegistry | undefined,
): LbPolicy | undefined | typeof SKIP {
  switch (typed.type_url) {
    case POLICY_URL.roundRobin:
      return ROUND_ROBIN;
    case POLICY_URL.ringHash: {
      const config = decodeAnyValue(
        'envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash',
        typed,
        errors,
      );
      if (config === undefined) return undefined;
      // DEFAULT_HASH is xxHash in Envoy, so it is accepted along with XX_HASH.
      if (
        config.hashFunction !== RingHash_HashFunction.XX_HASH &&
        config.hashFunction !== RingHash_HashFunction.DEFAULT_HASH
      ) {
        errors.addAt(
          'hash_function',
          `unsupported value ${RingHash_HashFunction[config.hashFunction] ?? config.hashFunction}`,
        );
      }
      return ringHash(config.minimumRingSize, config.maximumRingSize, errors);
    }
    case POLICY_URL.leastRequest: {
      const config = decodeAnyValue(
        'envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest',
        typed,
        errors,
      );
      return config === undefined ? undefined : leastRequest(config.choiceCount, errors);
    }
    case POLICY_URL.pickFirst: {
      const config = decodeAnyValue(
        'envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst',
        typed,
        errors,
      );
      if (config === undefined) return undefined;
      return Object.freeze({ name: 'pick_first', shuffleAddressList: config.shuffleAddressList });
    }
    case POLICY_URL.wrrLocality: {
      const config = decodeAnyValue(
        'envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality',
        typed,
        errors,
      );
      if (config === undefined) return undefined;
      const inner = config.endpointPickingPolicy;
      if (inner === null) {
        errors.addAt('endpoint_picking_policy', 'field not present');
        return undefined;
      }
      const child = errors.field('endpoint_picking_policy', () =>
        convertPolicyList(inner, depth + 1, errors, registry),
      );
      return child === undefined ? undefined : Object.freeze({ name: 'wrr_locality', child });
    }
    case POLICY_URL.clientSideWrr:
      // Only where the consumer has the policy (A58 lists round_robin after it as a fallback).
      if (registry !== undefined && !registry.has(WEIGHTED_ROUND_ROBIN_POLICY_NAME)) return SKIP;
      return clientSideWeightedRoundRobin(typed, errors);
    case POLICY_URL.xdsTypedStruct:
    case POLICY_URL.udpaTypedStruct:
      return customPolicy(typed, errors, registry);
    default:
      return SKIP;
  }
}

const DEFAULT_WRR = {
  oobReportingPeriodMs: 10_000,
  blackoutPeriodMs: 10_000,
  weightExpirationPeriodMs: 180_000,
  weightUpdatePeriodMs: 1_000,
};

/** gRFC A58's config: durations valid and non-negative, the penalty non-negative. */
function clientSideWeightedRoundRobin(typed: Any, errors: ValidationErrors): LbPolicy | undefined {
  const config = decodeAnyValue(
    'envoy.extensions.load_balancing_policies.client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin',
    typed,
    errors,
  );
  if (config === undefined) return undefined;
  const before = errors.count;
  const duration = (name: string, value: Duration | null, fallback: number): number =>
    value === null ? fallback : errors.field(name, () => durationMs(value, errors));
  const oobReportingPeriodMs = duration(
    'oob_reporting_period',
    config.oobReportingPeriod,
    DEFAULT_WRR.oobReportingPeriodMs,
  );
  const blackoutPeriodMs = duration(
    'blackout_period',
    config.blackoutPeriod,
    DEFAULT_WRR.blackoutPeriodMs,
  );
  const weightExpirationPeriodMs = duration(
    'weight_expiration_period',
    config.weightExpirationPeriod,
    DEFAULT_WRR.weightExpirationPeriodMs,
  );
  const weightUpdatePeriodMs = duration(
    'weight_update_period',
    config.weightUpdatePeriod,
    DEFAULT_WRR.weightUpdatePeriodMs,
  );
  const errorUtilizationPenalty = config.errorUtilizationPenalty?.value ?? 1;
  // NaN fails this too.
  if (!(errorUtilizationPenalty >= 0)) {
    errors.addAt('error_utilization_penalty', 'must be non-negative');
  }
  if (errors.count !== before) return undefined;
  return Object.freeze({
    name: 'client_side_weighted_round_robin',
    enableOobLoadReport: config.enableOobLoadReport?.value ?? false,
    oobReportingPeriodMs,
    blackoutPeriodMs,
    weightExpirationPeriodMs,
    weightUpdatePeriodMs,
    errorUtilizationPenalty,
  });
}

/**
 * A52: a TypedStruct names a policy by its `type_url`'s last segment and carries its config as
 * a Struct. A policy the registry lacks is skipped (so is every one without a registry); a
 * config the registry's policy rejects fails the Cluster.
 */
function customPolicy(
  typed: Any,
  errors: ValidationErrors,
  registry: LbPolicyRegistry | undefined,
): LbPolicy | undefined | typeof SKIP {
  // Without a registry nothing custom can run: skipped unread, as every unknown type.
  if (registry === undefined) return SKIP;
  const fullName =
    typed.type_url === POLICY_URL.xdsTypedStruct
      ? 'xds.type.v3.TypedStruct'
      : 'udpa.type.v1.TypedStruct';
  const typedStruct = decodeAnyValue(fullName, typed, errors);
  if (typedStruct === undefined) return undefined;
  const policyName = typeNameOfUrl(typedStruct.typeUrl);
  if (policyName === '' || !registry.has(policyName)) return SKIP;
  const config = typedStruct.value === null ? EMPTY_CONFIG : structToJson(typedStruct.value);
  let problem: string | undefined;
  try {
    problem = registry.configError(policyName, config);
  } catch (e) {
    problem = e instanceof Error ? e.message : String(e);
  }
  if (problem !== undefined) {
    errors.addAt('value', `invalid config for LB policy ${policyName}: ${problem}`);
    return undefined;
  }
  return Object.freeze({ name: 'custom', policyName, config });
}

function ringHash(
  min: UInt64Value | null,
  max: UInt64Value | null,
  errors: ValidationErrors,
): LbPolicy | undefined {
  const before = errors.count;
  const maxRingSize = max === null ? RING_SIZE_LIMIT : int64ToNumber(max.value);
  const minRingSize = min === null ? DEFAULT_MIN_RING_SIZE : int64ToNumber(min.value);
  const range = `must be in range [1, ${RING_SIZE_LIMIT}]`;
  const maxOk = maxRingSize >= 1 && maxRingSize <= RING_SIZE_LIMIT;
  if (!maxOk) errors.addAt('maximum_ring_size', range);
  if (minRingSize < 1 || minRingSize > RING_SIZE_LIMIT) errors.addAt('minimum_ring_size', range);
  else if (maxOk && minRingSize > maxRingSize) {
    errors.addAt('minimum_ring_size', 'must not exceed maximum_ring_size');
  }
  if (errors.count !== before) return undefined;
  return Object.freeze({ name: 'ring_hash', minRingSize, maxRingSize });
}

function leastRequest(
  choiceCount: UInt32Value | null,
  errors: ValidationErrors,
): LbPolicy | undefined {
  const count = choiceCount === null ? DEFAULT_CHOICE_COUNT : choiceCount.value;
  if (count < 2) {
    errors.addAt('choice_count', 'must be greater than 1');
    return undefined;
  }
  return Object.freeze({ name: 'least_request', choiceCount: Math.min(count, MAX_CHOICE_COUNT) });
}
