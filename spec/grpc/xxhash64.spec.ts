// XXH64, seed 0 (gRFC A42's hash; decision 0013): known values from the reference implementation
// (`printf %s "$text" | xxhsum -H1`, xxHash 0.8.1), and a property test against a direct BigInt
// transcription of the algorithm.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { xxh64, xxh64Halves } from '../../lib/grpc/xxhash64';

const VECTORS: readonly (readonly [string, string])[] = [
  ['', 'ef46db3751d8e999'],
  ['a', 'd24ec4f1a98c6e5b'],
  ['abc', '44bc2cf5ad770999'],
  ['abcdefg', '1860940e2902822d'],
  ['xxhash', '32dd38952c4bc720'],
  ['user-42', '397e9d3a76af7c81'],
  ['message digest', '066ed728fceeb3be'],
  ['127.0.0.1:8080_0', 'f673a43b9624fa24'],
  ['abcdefghijklmnopqrstuvwxyz', 'cfe1f278fa89835c'],
  // Exactly one 32-byte stripe, then one stripe and a byte.
  ['0123456789abcdef0123456789abcdef', '642a94958e71e6c5'],
  ['0123456789abcdef0123456789abcdef0', 'e87684f08d6d0816'],
  [
    '12345678901234567890123456789012345678901234567890123456789012345678901234567890',
    'e04a477f19ee145d',
  ],
  // UTF-8 bytes, not UTF-16 units.
  ['héllo wörld ✓', '34d9919c86f55ac4'],
];

describe('XXH64', () => {
  it('gives the reference implementation’s values', () => {
    for (const [text, hex] of VECTORS) {
      assert.equal(xxh64(text).toString(16).padStart(16, '0'), hex, JSON.stringify(text));
    }
  });

  it('hashes a long text (past the reused buffer) like its bytes', () => {
    const text = 'é'.repeat(700);
    const [high, low] = xxh64Halves(new TextEncoder().encode(text));
    assert.equal(xxh64(text), (BigInt(high) << 32n) | BigInt(low));
  });

  it('agrees with a BigInt transcription of the algorithm on random inputs', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const [high, low] = xxh64Halves(bytes);
        assert.equal((BigInt(high) << 32n) | BigInt(low), referenceXxh64(bytes));
      }),
      { numRuns: 300 },
    );
  });
});

// ---- The algorithm, spelled out on BigInts (slow, obviously 64-bit) ----

const M = (1n << 64n) - 1n;
const P1 = 0x9e3779b185ebca87n;
const P2 = 0xc2b2ae3d27d4eb4fn;
const P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n;
const P5 = 0x27d4eb2f165667c5n;

const rotl = (x: bigint, r: bigint) => ((x << r) | (x >> (64n - r))) & M;
const round = (acc: bigint, lane: bigint) => (rotl((acc + lane * P2) & M, 31n) * P1) & M;
const merge = (h: bigint, v: bigint) => (((h ^ round(0n, v)) * P1) & M) + P4;

function referenceXxh64(b: Uint8Array): bigint {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const u64 = (i: number) => view.getBigUint64(i, true);
  let i = 0;
  let h: bigint;
  if (b.length >= 32) {
    let v1 = (P1 + P2) & M;
    let v2 = P2;
    let v3 = 0n;
    let v4 = (0n - P1) & M;
    for (; i + 32 <= b.length; i += 32) {
      v1 = round(v1, u64(i));
      v2 = round(v2, u64(i + 8));
      v3 = round(v3, u64(i + 16));
      v4 = round(v4, u64(i + 24));
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & M;
    for (const v of [v1, v2, v3, v4]) h = merge(h, v) & M;
  } else {
    h = P5;
  }
  h = (h + BigInt(b.length)) & M;
  for (; i + 8 <= b.length; i += 8) h = ((rotl(h ^ round(0n, u64(i)), 27n) * P1) & M) + P4;
  h &= M;
  if (i + 4 <= b.length) {
    h = (((rotl(h ^ ((BigInt(view.getUint32(i, true)) * P1) & M), 23n) * P2) & M) + P3) & M;
    i += 4;
  }
  for (; i < b.length; i++) h = (rotl(h ^ ((BigInt(b[i]!) * P5) & M), 11n) * P1) & M;
  h ^= h >> 33n;
  h = (h * P2) & M;
  h ^= h >> 29n;
  h = (h * P3) & M;
  return h ^ (h >> 32n);
}
