// The protobuf wire format, written: what the encoders generated into lib/generated/encoders.ts
// call (decision 0060). It writes what protobufjs's Writer writes for the same values (varints
// of minimal length, negative int32 as ten bytes, packed repeated scalars as the schema says).
// 64-bit integers may be numbers, Long-like `{ low, high }` objects or decimal strings.

const TWO_32 = 4294967296;

/** What an int64 field may hold on a message to encode. */
export type Int64Input = number | string | { low: number; high: number };

export class WireWriter {
  private buf: Buffer;
  pos = 0;

  constructor(capacity = 256) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  private ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  uint32(value: number): void {
    this.ensure(5);
    let v = value >>> 0;
    while (v > 127) {
      this.buf[this.pos++] = (v & 127) | 128;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  int32(value: number): void {
    if (value < 0) this.varint64((value | 0) >>> 0, 0xffffffff);
    else this.uint32(value);
  }

  sint32(value: number): void {
    this.uint32(((value << 1) ^ (value >> 31)) >>> 0);
  }

  bool(value: boolean): void {
    this.uint32(value ? 1 : 0);
  }

  private varint64(lo: number, hi: number): void {
    this.ensure(10);
    while (hi !== 0 || lo > 127) {
      this.buf[this.pos++] = (lo & 127) | 128;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    this.buf[this.pos++] = lo;
  }

  int64(value: Int64Input): void {
    const [lo, hi] = bits(value);
    this.varint64(lo, hi);
  }

  uint64(value: Int64Input): void {
    this.int64(value);
  }

  sint64(value: Int64Input): void {
    const [lo, hi] = bits(value);
    // Zig-zag: (n << 1) ^ (n >> 63).
    const mask = hi >> 31;
    this.varint64(((lo << 1) ^ mask) >>> 0, (((hi << 1) | (lo >>> 31)) ^ mask) >>> 0);
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  sfixed32(value: number): void {
    this.fixed32(value | 0);
  }

  fixed64(value: Int64Input): void {
    const [lo, hi] = bits(value);
    this.fixed32(lo);
    this.fixed32(hi);
  }

  sfixed64(value: Int64Input): void {
    this.fixed64(value);
  }

  float(value: number): void {
    this.ensure(4);
    this.buf.writeFloatLE(value, this.pos);
    this.pos += 4;
  }

  double(value: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  string(value: string): void {
    const length = Buffer.byteLength(value);
    this.uint32(length);
    this.ensure(length);
    this.pos += this.buf.write(value, this.pos, length, 'utf8');
  }

  /** Bytes, or a base64 string as protobufjs takes one. */
  bytes(value: Uint8Array | string): void {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'base64') : value;
    this.uint32(bytes.length);
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** Starts a length-delimited value: one byte is kept for its length, moved if it needs more. */
  fork(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Ends the value `fork` started: writes its length in minimal form before it. */
  ldelim(start: number): void {
    const length = this.pos - start - 1;
    if (length < 128) {
      this.buf[start] = length;
      return;
    }
    let size = 1;
    for (let v = length >>> 7; v > 0; v >>>= 7) size++;
    this.ensure(size - 1);
    this.buf.copy(this.buf, start + size, start + 1, this.pos);
    this.pos = start;
    this.uint32(length);
    this.pos = start + size + length;
  }

  /** The bytes written: a Buffer of its own (no spare capacity kept past a small margin). */
  finish(): Buffer {
    if (this.buf.length - this.pos <= 1024) return this.buf.subarray(0, this.pos);
    return Buffer.from(this.buf.subarray(0, this.pos));
  }
}

/** An int64 value as its low and high 32 bits (two's complement), as protobufjs's LongBits. */
function bits(value: Int64Input): [number, number] {
  if (typeof value === 'number') {
    if (value === 0 || !Number.isFinite(value)) return [0, 0];
    const negative = value < 0;
    const magnitude = negative ? -value : value;
    let lo = magnitude >>> 0;
    let hi = ((magnitude - lo) / TWO_32) >>> 0;
    if (negative) {
      hi = ~hi >>> 0;
      lo = ~lo >>> 0;
      if (++lo > 0xffffffff) {
        lo = 0;
        if (++hi > 0xffffffff) hi = 0;
      }
    }
    return [lo, hi];
  }
  if (typeof value === 'string') {
    const big = BigInt.asUintN(64, BigInt(value));
    return [Number(big & 0xffffffffn), Number(big >> 32n)];
  }
  return [value.low >>> 0, value.high >>> 0];
}
