// RouteAction validation: cluster specifier, weighted clusters (A28), max stream duration (A31),
// retry policy (A44), hash policies (A42) and auto_host_rewrite (A81).
import type {
  RetryPolicy as RetryPolicyProto,
  RouteAction as RouteActionProto,
  RouteAction_HashPolicy,
  WeightedCluster as WeightedClusterProto,
} from '../../generated/protos';
import { durationMs } from '../common';
import { frozenList } from '../../frozen-list';
import type { ValidationErrors } from '../../validation-errors';
import { validateFilterOverrides } from './filters';
import { validateRegex } from './matchers';
import type {
  ForwardingSettings,
  HashPolicy,
  RetryOnCode,
  RetryPolicy,
  RouteAction,
  WeightedCluster,
} from './update';

const MAX_TOTAL_WEIGHT = 0xffff_ffff;
const RETRY_ON_CODES: ReadonlySet<string> = new Set<RetryOnCode>([
  'cancelled',
  'deadline-exceeded',
  'internal',
  'resource-exhausted',
  'unavailable',
]);
const DEFAULT_BASE_INTERVAL_MS = 25;
const MIN_INTERVAL_MS = 1;
/** The only filter_state key gRPC hashes on (A42). */
const CHANNEL_ID_KEY = 'io.grpc.channel_id';

/**
 * Names of the cluster specifier plugins the RouteConfiguration declares. This library
 * implements no plugin type, so a route using a declared one is always skipped.
 */
export type ClusterSpecifierPlugins = ReadonlySet<string>;

/** Validates a `retry_policy` (route or virtual host) at the current path. */
export function validateRetryPolicy(
  policy: RetryPolicyProto,
  errors: ValidationErrors,
): RetryPolicy {
  const retryOn: RetryOnCode[] = [];
  // Unknown names are ignored, not NACKed: retry_on is shared with Envoy, which has many more.
  for (const raw of policy.retryOn.split(',')) {
    const code = raw.trim().toLowerCase();
    if (RETRY_ON_CODES.has(code) && !retryOn.includes(code as RetryOnCode)) {
      retryOn.push(code as RetryOnCode);
    }
  }
  const numRetries = policy.numRetries?.value ?? 1;
  if (numRetries < 1) errors.addAt('num_retries', 'must be greater than 0');
  let baseIntervalMs = DEFAULT_BASE_INTERVAL_MS;
  let maxIntervalMs = 10 * DEFAULT_BASE_INTERVAL_MS;
  const backOff = policy.retryBackOff;
  if (backOff) {
    errors.field('retry_back_off', () => {
      if (!backOff.baseInterval) {
        errors.addAt('base_interval', 'field not present');
      } else {
        baseIntervalMs = errors.field('base_interval', () => {
          const before = errors.count;
          const ms = durationMs(backOff.baseInterval!, errors);
          if (ms <= 0 && errors.count === before) errors.add('must be greater than 0');
          return ms;
        });
      }
      // A max below the base is kept, as C-core and grpc-go keep it: A6's backoff takes the
      // smaller of the two, so every retry waits up to the max (issue 20).
      maxIntervalMs = 10 * baseIntervalMs;
      if (backOff.maxInterval) {
        maxIntervalMs = errors.field('max_interval', () =>
          durationMs(backOff.maxInterval!, errors),
        );
      }
    });
  }
  // A44: intervals under 1 ms count as 1 ms.
  return Object.freeze({
    retryOn: frozenList(retryOn),
    numRetries,
    baseIntervalMs: Math.max(baseIntervalMs, MIN_INTERVAL_MS),
    maxIntervalMs: Math.max(maxIntervalMs, MIN_INTERVAL_MS),
  });
}

function validateHashPolicy(
  policy: RouteAction_HashPolicy,
  errors: ValidationErrors,
): HashPolicy | undefined {
  const terminal = policy.terminal;
  if (policy.policySpecifier === 'header') {
    return errors.field('header', () => {
      const header = policy.header!;
      if (header.headerName === '') errors.addAt('header_name', 'must be non-empty');
      const rewrite = header.regexRewrite;
      if (!rewrite) return { type: 'header', headerName: header.headerName, terminal } as const;
      return errors.field('regex_rewrite', () => {
        if (!rewrite.pattern) {
          errors.addAt('pattern', 'field not present');
          return undefined;
        }
        const regex = errors.field('pattern', () => validateRegex(rewrite.pattern!, errors));
        if (regex === undefined) return undefined;
        return {
          type: 'header',
          headerName: header.headerName,
          regexRewrite: Object.freeze({ regex, substitution: rewrite.substitution }),
          terminal,
        } as const;
      });
    });
  }
  if (policy.policySpecifier === 'filterState' && policy.filterState!.key === CHANNEL_ID_KEY) {
    return { type: 'channel_id', terminal };
  }
  // connection_properties, other filter_state keys: gRPC ignores them (A42).
  return undefined;
}

function validateWeightedClusters(
  weighted: WeightedClusterProto,
  errors: ValidationErrors,
): WeightedCluster[] {
  const clusters: WeightedCluster[] = [];
  let total = 0;
  weighted.clusters.forEach((cluster, i) => {
    errors.field('clusters', () =>
      errors.index(i, () => {
        const typedPerFilterConfig = validateFilterOverrides(cluster.typedPerFilterConfig, errors);
        if (cluster.name === '') errors.addAt('name', 'must be non-empty');
        if (!cluster.weight) {
          errors.addAt('weight', 'field not present');
          return;
        }
        // A zero weight takes no traffic: gRPC leaves the entry out rather than NACK.
        if (cluster.weight.value === 0) return;
        total += cluster.weight.value;
        clusters.push(
          Object.freeze({
            name: cluster.name,
            weight: cluster.weight.value,
            ...(typedPerFilterConfig ? { typedPerFilterConfig } : {}),
          }),
        );
      }),
    );
  });
  if (total === 0) errors.add('sum of weights must be greater than 0');
  else if (total > MAX_TOTAL_WEIGHT) {
    errors.add(`sum of weights must be in range [1, ${MAX_TOTAL_WEIGHT}]`);
  }
  return clusters;
}

function validateMaxStreamDuration(
  action: RouteActionProto,
  errors: ValidationErrors,
): number | undefined {
  const msd = action.maxStreamDuration;
  if (!msd) return undefined;
  return errors.field('max_stream_duration', () => {
    // A31: the header cap wins when both are set.
    if (msd.grpcTimeoutHeaderMax) {
      return errors.field('grpc_timeout_header_max', () =>
        durationMs(msd.grpcTimeoutHeaderMax!, errors),
      );
    }
    if (msd.maxStreamDuration) {
      return errors.field('max_stream_duration', () => durationMs(msd.maxStreamDuration!, errors));
    }
    return undefined;
  });
}

/**
 * Validates `route` (a RouteAction) at the current path. Returns undefined when the route must
 * be skipped (an unsupported cluster specifier), as C-core and grpc-go do; every field is still
 * checked so that one NACK names all problems.
 */
export function validateRouteAction(
  action: RouteActionProto,
  virtualHostRetry: RetryPolicy | undefined,
  plugins: ClusterSpecifierPlugins,
  errors: ValidationErrors,
  trustedXdsServer = false,
): RouteAction | undefined {
  const maxStreamDurationMs = validateMaxStreamDuration(action, errors);
  const hashPolicies: HashPolicy[] = [];
  action.hashPolicy.forEach((policy, i) => {
    const h = errors.field('hash_policy', () =>
      errors.index(i, () => validateHashPolicy(policy, errors)),
    );
    if (h) hashPolicies.push(Object.freeze(h));
  });
  const retryPolicy = action.retryPolicy
    ? errors.field('retry_policy', () => validateRetryPolicy(action.retryPolicy!, errors))
    : virtualHostRetry;
  const settings: ForwardingSettings = {
    hashPolicies: frozenList(hashPolicies),
    ...(maxStreamDurationMs === undefined ? {} : { maxStreamDurationMs }),
    ...(retryPolicy === undefined ? {} : { retryPolicy }),
    // A81: read only from a server the bootstrap trusts; any value is valid.
    ...(trustedXdsServer && action.autoHostRewrite?.value === true && { autoHostRewrite: true }),
  };
  switch (action.clusterSpecifier) {
    case 'cluster': {
      const cluster = action.cluster ?? '';
      if (cluster === '') errors.addAt('cluster', 'must be non-empty');
      return Object.freeze({ type: 'cluster', cluster, ...settings });
    }
    case 'weightedClusters': {
      const clusters = errors.field('weighted_clusters', () =>
        validateWeightedClusters(action.weightedClusters!, errors),
      );
      return Object.freeze({
        type: 'weighted_clusters',
        clusters: frozenList(clusters),
        ...settings,
      });
    }
    case 'clusterSpecifierPlugin': {
      const name = action.clusterSpecifierPlugin ?? '';
      errors.field('cluster_specifier_plugin', () => {
        if (name === '') errors.add('must be non-empty');
        else if (!plugins.has(name)) errors.add(`unsupported value "${name}": no such plugin`);
      });
      // Declared but unsupported: skip the route (gRFC A28 as amended for RLS).
      return undefined;
    }
    default:
      // cluster_header, inline_cluster_specifier_plugin or nothing: gRPC skips the route.
      return undefined;
  }
}
