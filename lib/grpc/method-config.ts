// The per-RPC method config the ConfigSelector hands grpc-js: the deadline of gRFC A31 and the
// retry policy of gRFC A44, in grpc-js's service-config terms.

import { status, type MethodConfig, type RetryPolicy as GrpcRetryPolicy } from '@grpc/grpc-js';
import { durationOfMs } from '../duration';
import type { RetryOnCode, RetryPolicy } from '../resources/route-config';

const NO_METHOD_CONFIG: MethodConfig = Object.freeze({ name: [] });

/** A6/A44: more than 5 attempts count as 5. */
export const MAX_ATTEMPTS = 5;

/** The longest timer Node keeps (longer ones fire at once): backoffs are held below it. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const CODES: Readonly<Record<RetryOnCode, status>> = {
  cancelled: status.CANCELLED,
  'deadline-exceeded': status.DEADLINE_EXCEEDED,
  internal: status.INTERNAL,
  'resource-exhausted': status.RESOURCE_EXHAUSTED,
  unavailable: status.UNAVAILABLE,
};

// One grpc-js policy (and one retry-only method config) per validated RetryPolicy object: the
// client hands out the same frozen object until the route configuration changes.
const retryPolicies = new WeakMap<RetryPolicy, GrpcRetryPolicy | null>();
const retryOnlyConfigs = new WeakMap<GrpcRetryPolicy, MethodConfig>();

/**
 * gRFC A44: an xDS retry policy as grpc-js's. maxAttempts = num_retries + 1 (at most 5),
 * initialBackoff = base_interval, maxBackoff = max_interval, multiplier 2, retryable codes
 * from retry_on. Undefined when retry_on names no supported code: then the route has no
 * retry policy.
 */
export function grpcRetryPolicy(policy: RetryPolicy): GrpcRetryPolicy | undefined {
  let converted = retryPolicies.get(policy);
  if (converted === undefined) {
    converted =
      policy.retryOn.length === 0
        ? null
        : Object.freeze({
            maxAttempts: Math.min(policy.numRetries + 1, MAX_ATTEMPTS),
            initialBackoff: seconds(policy.baseIntervalMs),
            maxBackoff: seconds(policy.maxIntervalMs),
            backoffMultiplier: 2,
            retryableStatusCodes: Object.freeze(policy.retryOn.map((code) => CODES[code])),
          } as GrpcRetryPolicy);
    retryPolicies.set(policy, converted);
  }
  return converted ?? undefined;
}

/**
 * The method config of one RPC: its A31 timeout (ms; undefined: none) and its route's retry
 * policy. Shared objects where nothing is per RPC; grpc-js only reads them.
 */
export function methodConfigFor(
  timeoutMs: number | undefined,
  retry: RetryPolicy | undefined,
): MethodConfig {
  const retryPolicy = retry === undefined ? undefined : grpcRetryPolicy(retry);
  if (timeoutMs === undefined) {
    if (retryPolicy === undefined) return NO_METHOD_CONFIG;
    let config = retryOnlyConfigs.get(retryPolicy);
    if (!config) {
      config = Object.freeze({ name: [], retryPolicy });
      retryOnlyConfigs.set(retryPolicy, config);
    }
    return config;
  }
  const timeout = durationOfMs(timeoutMs);
  return retryPolicy === undefined ? { name: [], timeout } : { name: [], timeout, retryPolicy };
}

/** A proto3-JSON duration string, as grpc-js reads backoffs ("0.025s"). */
function seconds(ms: number): string {
  return `${Math.min(ms, MAX_TIMER_MS) / 1000}s`;
}
