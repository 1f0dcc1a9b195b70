// gRFC A113's parts, with a seeded random source so that the counts are the same on every run:
// the weighted shuffle puts each endpoint first in proportion to its weight (and any endpoint
// can come first), and the cds policy's weights are the locality's share times the endpoint's,
// in UQ1.31 fixed point.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { weightedShuffle } from '../../../lib/grpc/lb/pick-first-weighted/pick-first-weighted';
import { normalizedWeights } from '../../../lib/grpc/lb/cds/endpoint-weights';
import type { LbEndpoint } from '../../../lib/resources/endpoint';
import { seeded } from '../../helpers/random';

/** How often each item comes first over `trials` shuffles. */
function firstShares(
  weights: Readonly<Record<string, number>>,
  trials: number,
  random: () => number,
): Record<string, number> {
  const items = Object.keys(weights);
  const counts: Record<string, number> = Object.fromEntries(items.map((i) => [i, 0]));
  for (let t = 0; t < trials; t++) {
    const first = weightedShuffle(items, (i) => weights[i]!, random)[0]!;
    counts[first]!++;
  }
  return Object.fromEntries(items.map((i) => [i, counts[i]! / trials]));
}

function endpoint(weight: number): LbEndpoint {
  return { address: '127.0.0.1', port: 1, healthStatus: 'UNKNOWN', weight } as LbEndpoint;
}

const ONE = 2 ** 31;

describe('pick_first weighted shuffling (A113)', () => {
  it('puts each endpoint first in proportion to its weight', () => {
    const shares = firstShares({ a: 1, b: 2, c: 7 }, 20_000, seeded(1));
    // 20,000 draws: a standard deviation of 0.003 at most; the bound is over six of them.
    assert.ok(Math.abs(shares.a! - 0.1) < 0.02, JSON.stringify(shares));
    assert.ok(Math.abs(shares.b! - 0.2) < 0.02, JSON.stringify(shares));
    assert.ok(Math.abs(shares.c! - 0.7) < 0.02, JSON.stringify(shares));
  });

  it('keeps its precision for weights near 2^31 (keys compared by their logarithms)', () => {
    const shares = firstShares({ a: ONE / 4, b: (ONE / 4) * 3 }, 20_000, seeded(2));
    assert.ok(Math.abs(shares.b! - 0.75) < 0.02, JSON.stringify(shares));
  });

  it('lets every endpoint come first, the second of two included (grpc-js 1.14 never does)', () => {
    for (const n of [2, 3, 5]) {
      const items = Array.from({ length: n }, (_, i) => `e${i}`);
      const weights = Object.fromEntries(items.map((i) => [i, 1]));
      const shares = firstShares(weights, 2_000, seeded(n));
      for (const item of items) {
        assert.ok(Math.abs(shares[item]! - 1 / n) < 0.05, `${n}: ${JSON.stringify(shares)}`);
      }
    }
  });

  it('weighs an endpoint by its locality’s share times its share of the locality', () => {
    const weights = normalizedWeights([
      { weight: 1, endpoints: [endpoint(1)] },
      { weight: 1, endpoints: [endpoint(1), endpoint(3)] },
      { weight: 2, endpoints: [endpoint(5)] },
    ]);
    assert.deepStrictEqual(weights, [[ONE / 4], [ONE / 16, (ONE / 16) * 3], [ONE / 2]]);
  });

  it('rounds a share down, and never to zero', () => {
    const weights = normalizedWeights([
      { weight: 1, endpoints: [endpoint(1), endpoint(2)] },
      { weight: 4_294_967_294, endpoints: [endpoint(1)] },
    ]);
    // A share of 1 / (2^32 - 1) is 0.5 in UQ1.31, so 0: its endpoints count 1, not 0.
    assert.deepStrictEqual(weights, [[1, 1], [ONE - 1]]);
  });

  it('ignores localities with no usable endpoints in the localities’ sum', () => {
    const weights = normalizedWeights([
      { weight: 3, endpoints: [] },
      { weight: 1, endpoints: [endpoint(1), endpoint(1)] },
    ]);
    assert.deepStrictEqual(weights, [[], [ONE / 2, ONE / 2]]);
  });

  it('takes shares among the endpoints that take traffic, not the draining ones', () => {
    const draining = { ...endpoint(1), healthStatus: 'DRAINING' } as LbEndpoint;
    const weights = normalizedWeights([
      { weight: 1, endpoints: [draining] },
      { weight: 1, endpoints: [endpoint(1), draining] },
    ]);
    // The first locality takes nothing, so the second has it all, and its one live endpoint too.
    assert.deepStrictEqual(weights, [[1], [ONE, 1]]);
  });
});
