// The method config an RPC gets from its route: gRFC A44's conversion of an xDS retry policy to
// grpc-js's, and A31's timeout beside it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { grpcRetryPolicy, methodConfigFor } from '../../lib/grpc/method-config';
import type { RetryPolicy } from '../../lib/resources/route-config';

function policy(fields: Partial<RetryPolicy> = {}): RetryPolicy {
  return Object.freeze<RetryPolicy>({
    retryOn: ['unavailable'],
    numRetries: 1,
    baseIntervalMs: 25,
    maxIntervalMs: 250,
    ...fields,
  });
}

describe('grpcRetryPolicy (A44)', () => {
  it('converts num_retries, the backoff and retry_on as A44 says', () => {
    const converted = grpcRetryPolicy(
      policy({
        retryOn: [
          'cancelled',
          'deadline-exceeded',
          'internal',
          'resource-exhausted',
          'unavailable',
        ],
        numRetries: 3,
        baseIntervalMs: 10,
        maxIntervalMs: 1500,
      }),
    );
    assert.deepEqual(converted, {
      maxAttempts: 4,
      initialBackoff: '0.01s',
      maxBackoff: '1.5s',
      backoffMultiplier: 2,
      retryableStatusCodes: [
        status.CANCELLED,
        status.DEADLINE_EXCEEDED,
        status.INTERNAL,
        status.RESOURCE_EXHAUSTED,
        status.UNAVAILABLE,
      ],
    });
  });

  it('counts more than 5 attempts as 5', () => {
    assert.equal(grpcRetryPolicy(policy({ numRetries: 4 }))?.maxAttempts, 5);
    assert.equal(grpcRetryPolicy(policy({ numRetries: 4_000_000_000 }))?.maxAttempts, 5);
  });

  it('gives no policy when retry_on names no supported code', () => {
    assert.equal(grpcRetryPolicy(policy({ retryOn: [] })), undefined);
  });

  it('holds backoffs below the longest timer Node keeps', () => {
    const converted = grpcRetryPolicy(policy({ maxIntervalMs: 315_576_000_000_000 }));
    assert.equal(converted?.maxBackoff, `${(2 ** 31 - 1) / 1000}s`);
  });

  it('converts each validated policy once', () => {
    const p = policy();
    assert.equal(grpcRetryPolicy(p), grpcRetryPolicy(p));
  });
});

describe('methodConfigFor', () => {
  it('has no timeout and no retry policy when the route sets neither', () => {
    assert.deepEqual(methodConfigFor(undefined, undefined), { name: [] });
    assert.deepEqual(methodConfigFor(undefined, policy({ retryOn: [] })), { name: [] });
  });

  it('carries the timeout and the retry policy together', () => {
    const p = policy();
    assert.deepEqual(methodConfigFor(1500, p), {
      name: [],
      timeout: { seconds: 1, nanos: 500_000_000 },
      retryPolicy: grpcRetryPolicy(p),
    });
    assert.deepEqual(methodConfigFor(undefined, p), { name: [], retryPolicy: grpcRetryPolicy(p) });
    assert.equal(methodConfigFor(undefined, p), methodConfigFor(undefined, p));
  });
});
