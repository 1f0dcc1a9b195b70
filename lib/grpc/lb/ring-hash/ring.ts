// The ring itself (gRFC A42): each endpoint's share of positions in proportion to its weight,
// XXH64 positions of its hash key, sorted; and the lookup of a request hash on it.

import { xxh64 } from '../../xxhash64';
import type { EndpointChild } from './endpoint-child';

/** The ring: positions sorted ascending, and the child at each position. */
export interface Ring {
  readonly hashes: BigUint64Array;
  readonly entries: Uint32Array;
  readonly children: readonly EndpointChild[];
}

const MAX_UINT64 = (1n << 64n) - 1n;

/** A decimal unsigned 64-bit value; undefined for anything else. */
export function parseHash(text: string): bigint | undefined {
  if (text === '' || !/^[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value <= MAX_UINT64 ? value : undefined;
}

/** The first index whose hash is at least `hash`, wrapping to 0 past the last. */
export function lowerBound(hashes: BigUint64Array, hash: bigint): number {
  let low = 0;
  let high = hashes.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (hashes[mid]! < hash) low = mid + 1;
    else high = mid;
  }
  return low === hashes.length ? 0 : low;
}

/** How many ring entries each endpoint gets, in order (exported for specs). */
export function ringShares(
  weights: readonly number[],
  minRingSize: number,
  maxRingSize: number,
): number[] {
  let sum = 0;
  for (const w of weights) sum += w;
  const normalized = weights.map((w) => w / sum);
  let minNormalized = 1;
  for (const n of normalized) minNormalized = Math.min(minNormalized, n);
  // Envoy's (and A42's) size: the smallest ring of at least minRingSize in which the lightest
  // endpoint has a whole number of entries, but no more than maxRingSize.
  const scale = Math.min(Math.ceil(minNormalized * minRingSize) / minNormalized, maxRingSize);
  const shares: number[] = [];
  let current = 0;
  let target = 0;
  for (const n of normalized) {
    target += scale * n;
    let count = 0;
    // Floating point may put the last target a hair past the end: the ring never outgrows max.
    while (current < target && current < maxRingSize) {
      current++;
      count++;
    }
    shares.push(count);
  }
  return shares;
}

export function buildRing(children: readonly EndpointChild[], min: number, max: number): Ring {
  const shares = ringShares(
    children.map((c) => c.weight),
    min,
    max,
  );
  let total = 0;
  for (const s of shares) total += s;
  const positions: { hash: bigint; child: number }[] = new Array(total);
  let k = 0;
  children.forEach((child, index) => {
    const count = shares[index]!;
    for (let n = 0; n < count; n++) {
      positions[k++] = { hash: xxh64(`${child.hashKey}_${n}`), child: index };
    }
  });
  positions.sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : a.child - b.child));
  const hashes = new BigUint64Array(total);
  const entries = new Uint32Array(total);
  positions.forEach((p, i) => {
    hashes[i] = p.hash;
    entries[i] = p.child;
  });
  return { hashes, entries, children };
}
