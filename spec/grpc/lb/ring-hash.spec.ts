// The ring_hash policy's ring sizes (gRFC A42: Envoy's construction) and its config.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_MAX_RING_SIZE,
  DEFAULT_MIN_RING_SIZE,
  RingHashConfig,
} from '../../../lib/grpc/lb/ring-hash/config';
import { ringShares } from '../../../lib/grpc/lb/ring-hash/ring';
import { POLICY } from '../../../lib/grpc/names';

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

describe('ring_hash: ring construction', () => {
  it('equal weights: min_ring_size entries when it divides evenly, shared equally', () => {
    assert.deepEqual(ringShares([1, 1, 1, 1], 1024, 4096), [256, 256, 256, 256]);
  });

  it('grows past min_ring_size until the lightest endpoint has a whole number of entries', () => {
    // 1024 / 3 is not whole: ceil(1024 / 3) = 342 each, a ring of 1026.
    const shares = ringShares([1, 1, 1], 1024, 4096);
    assert.deepEqual(shares, [342, 342, 342]);
  });

  it('shares follow the weights (A42’s example: 6, 3, 6, 2)', () => {
    // The lightest has 2/17 of the ring: ceil(1024 × 2/17) = 121 entries, so a ring of
    // 121 × 17/2 = 1028.5 → 1029 entries, dealt out in order by cumulative share.
    assert.deepEqual(ringShares([6, 3, 6, 2], 1024, 8_388_608), [363, 182, 363, 121]);
  });

  it('never exceeds max_ring_size, however uneven the weights', () => {
    const shares = ringShares([1, 1000], 1024, 2000);
    assert.equal(sum(shares), 2000);
    assert.ok(shares[0]! >= 1 && shares[0]! <= 3, String(shares));
  });

  it('a ring of one entry goes to the first endpoint', () => {
    assert.deepEqual(ringShares([1, 1, 1], 1, 1), [1, 0, 0]);
  });
});

describe('ring_hash: config', () => {
  it('defaults to A42’s 1024 and 4096', () => {
    const config = RingHashConfig.createFromJson({});
    assert.equal(config.minRingSize, DEFAULT_MIN_RING_SIZE);
    assert.equal(config.maxRingSize, DEFAULT_MAX_RING_SIZE);
    assert.deepEqual(config.toJsonObject(), {
      [POLICY.ringHash]: { min_ring_size: 1024, max_ring_size: 4096 },
    });
    assert.equal(config.getLoadBalancerName(), POLICY.ringHash);
  });

  it('round-trips through JSON', () => {
    const config = new RingHashConfig(10, 20);
    const json = (config.toJsonObject() as Record<string, unknown>)[POLICY.ringHash];
    assert.deepEqual(RingHashConfig.createFromJson(json), config);
  });

  it('refuses sizes out of [1, 8388608], fractions, and min above max', () => {
    for (const bad of [
      { min_ring_size: 0 },
      { max_ring_size: 8_388_609 },
      { min_ring_size: 1.5 },
      { max_ring_size: '10' },
      { min_ring_size: 20, max_ring_size: 10 },
      null,
      [],
    ]) {
      assert.throws(
        () => RingHashConfig.createFromJson(bad),
        /ring_size|config must be an object/,
        JSON.stringify(bad),
      );
    }
  });
});
