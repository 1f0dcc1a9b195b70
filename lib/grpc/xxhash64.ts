// XXH64 with seed 0, the hash gRFC A42 fixes for ring hash: request hashes and ring positions.
// Written for this library (decision 0013): 64-bit lanes are kept as two unsigned 32-bit halves
// in plain numbers, so a hash allocates nothing but its input bytes and the BigInt it returns.
// Checked against the reference implementation's output in spec/grpc/xxhash64.spec.ts.

/** The five primes of XXH64, as [high, low] 32-bit halves. */
const P1H = 0x9e3779b1;
const P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d;
const P2L = 0x27d4eb4f;
const P3H = 0x165667b1;
const P3L = 0x9e3779f9;
const P4H = 0x85ebca77;
const P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f;
const P5L = 0x165667c5;

// The result of the last 64-bit operation below. Module state, never observable outside a call.
let rh = 0;
let rl = 0;

/** (ah:al) * (bh:bl) mod 2^64 → rh:rl. */
function mul(ah: number, al: number, bh: number, bl: number): void {
  // al * bl exactly, from 16-bit pieces (each partial product stays below 2^32).
  const a0 = al & 0xffff;
  const a1 = al >>> 16;
  const b0 = bl & 0xffff;
  const b1 = bl >>> 16;
  const p00 = a0 * b0;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  rl = (((mid & 0xffff) << 16) | (p00 & 0xffff)) >>> 0;
  const high = a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16);
  // The cross terms only reach the high half, modulo 2^32.
  rh = (high + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0;
}

/** (ah:al) + (bh:bl) mod 2^64 → rh:rl. */
function add(ah: number, al: number, bh: number, bl: number): void {
  const low = al + bl;
  rl = low >>> 0;
  rh = (ah + bh + (low > 0xffffffff ? 1 : 0)) >>> 0;
}

/** (h:l) rotated left by r, 0 < r < 32 → rh:rl. */
function rotl(h: number, l: number, r: number): void {
  rh = ((h << r) | (l >>> (32 - r))) >>> 0;
  rl = ((l << r) | (h >>> (32 - r))) >>> 0;
}

/** XXH64's round: acc = rotl(acc + lane * P2, 31) * P1 → rh:rl. */
function round(acch: number, accl: number, laneh: number, lanel: number): void {
  mul(laneh, lanel, P2H, P2L);
  add(acch, accl, rh, rl);
  rotl(rh, rl, 31);
  mul(rh, rl, P1H, P1L);
}

/** XXH64's merge of an accumulator into the hash: (h ^ round(0, v)) * P1 + P4 → rh:rl. */
function merge(hh: number, hl: number, vh: number, vl: number): void {
  round(0, 0, vh, vl);
  mul((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, P1H, P1L);
  add(rh, rl, P4H, P4L);
}

function u32(b: Uint8Array, i: number): number {
  return (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0;
}

/** XXH64 of input[0, len), seed 0, as the unsigned 64-bit value's halves [high, low]. */
export function xxh64Halves(input: Uint8Array, len: number = input.length): [number, number] {
  let i = 0;
  let hh: number;
  let hl: number;
  if (len >= 32) {
    // v1 = P1 + P2, v2 = P2, v3 = 0, v4 = -P1 (seed 0).
    add(P1H, P1L, P2H, P2L);
    let v1h = rh;
    let v1l = rl;
    let v2h = P2H;
    let v2l = P2L;
    let v3h = 0;
    let v3l = 0;
    add(~P1H >>> 0, ~P1L >>> 0, 0, 1);
    let v4h = rh;
    let v4l = rl;
    const limit = len - 32;
    while (i <= limit) {
      round(v1h, v1l, u32(input, i + 4), u32(input, i));
      v1h = rh;
      v1l = rl;
      round(v2h, v2l, u32(input, i + 12), u32(input, i + 8));
      v2h = rh;
      v2l = rl;
      round(v3h, v3l, u32(input, i + 20), u32(input, i + 16));
      v3h = rh;
      v3l = rl;
      round(v4h, v4l, u32(input, i + 28), u32(input, i + 24));
      v4h = rh;
      v4l = rl;
      i += 32;
    }
    rotl(v1h, v1l, 1);
    hh = rh;
    hl = rl;
    rotl(v2h, v2l, 7);
    add(hh, hl, rh, rl);
    hh = rh;
    hl = rl;
    rotl(v3h, v3l, 12);
    add(hh, hl, rh, rl);
    hh = rh;
    hl = rl;
    rotl(v4h, v4l, 18);
    add(hh, hl, rh, rl);
    merge(rh, rl, v1h, v1l);
    merge(rh, rl, v2h, v2l);
    merge(rh, rl, v3h, v3l);
    merge(rh, rl, v4h, v4l);
    hh = rh;
    hl = rl;
  } else {
    hh = P5H;
    hl = P5L;
  }
  // + length (a JS array is far below 2^53, so its high half is exact).
  add(hh, hl, Math.floor(len / 0x1_0000_0000), len >>> 0);
  hh = rh;
  hl = rl;
  while (i + 8 <= len) {
    round(0, 0, u32(input, i + 4), u32(input, i));
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 27);
    mul(rh, rl, P1H, P1L);
    add(rh, rl, P4H, P4L);
    hh = rh;
    hl = rl;
    i += 8;
  }
  if (i + 4 <= len) {
    mul(0, u32(input, i), P1H, P1L);
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 23);
    mul(rh, rl, P2H, P2L);
    add(rh, rl, P3H, P3L);
    hh = rh;
    hl = rl;
    i += 4;
  }
  while (i < len) {
    mul(0, input[i]!, P5H, P5L);
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 11);
    mul(rh, rl, P1H, P1L);
    hh = rh;
    hl = rl;
    i++;
  }
  // Avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32.
  hl = (hl ^ (hh >>> 1)) >>> 0;
  mul(hh, hl, P2H, P2L);
  hh = rh;
  hl = (rl ^ ((rl >>> 29) | (rh << 3))) >>> 0;
  hh = (hh ^ (hh >>> 29)) >>> 0;
  mul(hh, hl, P3H, P3L);
  return [rh, (rl ^ rh) >>> 0];
}

const encoder = new TextEncoder();
/** Reused for short inputs (header values, ring keys): UTF-8 takes at most 3 bytes a UTF-16 unit. */
const scratch = new Uint8Array(1024);

/** XXH64 of the UTF-8 bytes of `text`, seed 0, as an unsigned 64-bit BigInt. */
export function xxh64(text: string): bigint {
  let high: number;
  let low: number;
  if (text.length * 3 <= scratch.length) {
    const { written } = encoder.encodeInto(text, scratch);
    [high, low] = xxh64Halves(scratch, written);
  } else {
    [high, low] = xxh64Halves(encoder.encode(text));
  }
  return (BigInt(high) << 32n) | BigInt(low);
}
