// gRFC A113's endpoint weights: within a priority, an endpoint's weight is its locality's share
// of the priority times its own share of the locality, each share a UQ1.31 fixed-point fraction
// (2^31 is 1), so a control plane's "first the locality, then the endpoint" holds for every
// policy that weighs endpoints over all localities at once (ring_hash, the weighted pick_first).

import type { LbEndpoint } from '../../../resources/endpoint';

/** 1.0 in UQ1.31. */
const ONE_SHIFT = 31n;

/** `numerator / denominator` in UQ1.31, rounded down. */
function fraction(numerator: number, denominator: number): bigint {
  return (BigInt(numerator) << ONE_SHIFT) / BigInt(denominator);
}

/** The product of two UQ1.31 fractions, rounded down, and at least 1 (A113). */
function product(a: bigint, b: bigint): number {
  const result = Number((a * b) >> ONE_SHIFT);
  return result === 0 ? 1 : result;
}

export interface WeightedLocality {
  readonly weight: number;
  /** The usable endpoints; the weights are shares among those that take new traffic. */
  readonly endpoints: readonly LbEndpoint[];
}

/**
 * A DRAINING endpoint (kept for the sessions of A55) takes no new traffic: override_host keeps
 * it from the policies that weigh endpoints, so it counts in no share.
 */
const takesTraffic = (e: LbEndpoint) => e.healthStatus !== 'DRAINING';

/**
 * Each endpoint's A113 weight, locality by locality in order. Shares are taken among the
 * endpoints that take traffic, so a locality's share is not lowered by endpoints that cannot;
 * the others weigh 1 (no policy that weighs endpoints sees them).
 */
export function normalizedWeights(localities: readonly WeightedLocality[]): number[][] {
  let localitySum = 0;
  for (const l of localities) if (l.endpoints.some(takesTraffic)) localitySum += l.weight;
  return localities.map((l) => {
    let endpointSum = 0;
    for (const e of l.endpoints) if (takesTraffic(e)) endpointSum += e.weight;
    if (endpointSum === 0 || localitySum === 0) return l.endpoints.map(() => 1);
    const localityShare = fraction(l.weight, localitySum);
    return l.endpoints.map((e) =>
      takesTraffic(e) ? product(localityShare, fraction(e.weight, endpointSum)) : 1,
    );
  });
}
