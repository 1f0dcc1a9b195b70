// The protobuf wire format, read: what the decoders generated into lib/generated/decoders.ts
// call (decision 0060). It reads as protobufjs's Reader does, so that bytes protobufjs accepts
// decode to the same values here and bytes it refuses fail with the same reasons: a read past
// the end of the message is `index out of range: <pos> + <n> > <len>`, an unknown wire type
// `invalid wire type <t> at offset <pos>`. 64-bit integers are numbers (exact up to 2^53, as
// protobufjs's Long.toNumber), never Long objects.

/** Nested messages deeper than this fail, as protobufjs's (and protoc's) recursion limit. */
export const RECURSION_LIMIT = 100;

const TWO_32 = 4294967296;

function indexOutOfRange(reader: WireReader, length = 1): RangeError {
  return new RangeError(`index out of range: ${reader.pos} + ${length} > ${reader.len}`);
}

/**
 * Buffer's native decoder, as protobufjs's Buffer reader uses: invalid UTF-8 is replaced the same
 * way. (A JavaScript loop for short ASCII strings was no faster once optimised, and much slower
 * in the interpreter, where a fresh process's first responses run.)
 */
export function utf8(buf: Uint8Array, start: number, end: number): string {
  return Buffer.prototype.utf8Slice.call(buf, start, end);
}

declare global {
  interface Buffer {
    utf8Slice(start: number, end: number): string;
  }
}

export class WireReader {
  pos = 0;
  /** The end of the message being read: nested messages lower it while they are read. */
  len: number;
  /** The last repeatedString(): its text and where its bytes are in `buf`. */
  private repeatedText = '';
  private repeatedStart = 0;
  private repeatedEnd = 0;

  constructor(readonly buf: Uint8Array) {
    this.len = buf.length;
  }

  /** A varint as an unsigned 32-bit value (longer varints keep their low 32 bits). */
  uint32(): number {
    const buf = this.buf;
    const pos = this.pos;
    // One byte: most tags and lengths. Checked against the message's end, since `len` is the
    // end of the nested message being read (often a few bytes away).
    if (pos < this.len) {
      const b = buf[pos]!;
      if (b < 128) {
        this.pos = pos + 1;
        return b;
      }
    }
    return this.uint32Long();
  }

  private uint32Long(): number {
    let value = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.len) throw indexOutOfRange(this);
      const b = this.buf[this.pos++]!;
      // Bytes 6 to 10 carry bits above 32: skipped, as protobufjs does.
      if (i < 5) value = (value | ((b & 127) << (i * 7))) >>> 0;
      if (b < 128) return value;
    }
    throw new Error('invalid varint encoding');
  }

  int32(): number {
    return this.uint32() | 0;
  }

  sint32(): number {
    const value = this.uint32();
    return ((value >>> 1) ^ -(value & 1)) | 0;
  }

  bool(): boolean {
    return this.uint32() !== 0;
  }

  /** A varint of up to 64 bits as its low and high 32 bits, left in `lo` and `hi`. */
  private lo = 0;
  private hi = 0;

  private varint64(): void {
    let lo = 0;
    let hi = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (this.pos >= this.len) throw indexOutOfRange(this);
      const b = this.buf[this.pos++]!;
      if (shift < 28) lo |= (b & 127) << shift;
      else if (shift === 28) {
        lo |= (b & 15) << 28;
        hi |= (b & 127) >> 4;
      } else hi |= (b & 127) << (shift - 32);
      if (b < 128) {
        this.lo = lo >>> 0;
        this.hi = hi >>> 0;
        return;
      }
    }
    throw new Error('invalid varint encoding');
  }

  int64(): number {
    this.varint64();
    return (this.hi | 0) * TWO_32 + this.lo;
  }

  uint64(): number {
    this.varint64();
    return this.hi * TWO_32 + this.lo;
  }

  sint64(): number {
    this.varint64();
    // Zig-zag: the sign is the lowest bit.
    const negative = this.lo & 1;
    const lo = ((this.lo >>> 1) | (this.hi << 31)) >>> 0;
    const hi = this.hi >>> 1;
    return negative ? -(hi * TWO_32 + lo) - 1 : hi * TWO_32 + lo;
  }

  private checkAvailable(length: number): void {
    if (this.pos + length > this.len) throw indexOutOfRange(this, length);
  }

  fixed32(): number {
    this.checkAvailable(4);
    const buf = this.buf;
    const pos = this.pos;
    this.pos = pos + 4;
    return (buf[pos]! | (buf[pos + 1]! << 8) | (buf[pos + 2]! << 16) | (buf[pos + 3]! << 24)) >>> 0;
  }

  sfixed32(): number {
    return this.fixed32() | 0;
  }

  fixed64(): number {
    const lo = this.fixed32();
    return this.fixed32() * TWO_32 + lo;
  }

  sfixed64(): number {
    const lo = this.fixed32();
    return (this.fixed32() | 0) * TWO_32 + lo;
  }

  float(): number {
    this.checkAvailable(4);
    scratch.set(this.buf.subarray(this.pos, this.pos + 4));
    this.pos += 4;
    return scratchView.getFloat32(0, true);
  }

  double(): number {
    this.checkAvailable(8);
    scratch.set(this.buf.subarray(this.pos, this.pos + 8));
    this.pos += 8;
    return scratchView.getFloat64(0, true);
  }

  /** The end of a length-delimited field starting here, checked against the message's end. */
  delimitedEnd(): number {
    const length = this.uint32();
    const end = this.pos + length;
    if (end > this.len) throw indexOutOfRange(this, length);
    return end;
  }

  string(): string {
    const end = this.delimitedEnd();
    const text = utf8(this.buf, this.pos, end);
    this.pos = end;
    return text;
  }

  /**
   * A string that usually repeats the previous one read this way (an Any's `type_url`: every
   * resource of a response has the same): the same bytes give the same string object, so a
   * response of 10,000 resources holds one type URL instead of 10,000 equal copies
   * (decision 0075). Other bytes are decoded as string() does.
   */
  repeatedString(): string {
    const end = this.delimitedEnd();
    const start = this.pos;
    this.pos = end;
    const length = end - start;
    if (length === this.repeatedEnd - this.repeatedStart) {
      const buf = this.buf;
      const offset = this.repeatedStart - start;
      let i = start;
      while (i < end && buf[i] === buf[i + offset]) i++;
      if (i === end) return this.repeatedText;
    }
    const text = utf8(this.buf, start, end);
    this.repeatedText = text;
    this.repeatedStart = start;
    this.repeatedEnd = end;
    return text;
  }

  /** A view of the bytes, not a copy, as protobufjs's reader returns. */
  bytes(): Uint8Array {
    const end = this.delimitedEnd();
    const bytes = this.buf.subarray(this.pos, end);
    this.pos = end;
    return bytes;
  }

  /** Skips one field's value of the given wire type (groups included). */
  skip(wireType: number, depth: number): void {
    if (depth > RECURSION_LIMIT) throw new Error('maximum nesting depth exceeded');
    switch (wireType) {
      case 0:
        this.varint64();
        return;
      case 1:
        this.checkAvailable(8);
        this.pos += 8;
        return;
      case 2:
        this.pos = this.delimitedEnd();
        return;
      case 3:
        for (;;) {
          const tag = this.uint32();
          if ((tag & 7) === 4) return;
          this.skip(tag & 7, depth + 1);
        }
      case 5:
        this.checkAvailable(4);
        this.pos += 4;
        return;
      default:
        throw new Error(`invalid wire type ${wireType} at offset ${this.pos}`);
    }
  }

  /**
   * Enters a nested message of the given length-delimited field: returns the end of the
   * enclosing message, to give back to `leave`, and lowers `len` to the nested one's end.
   */
  enter(depth: number): number {
    if (depth > RECURSION_LIMIT) throw new Error('maximum nesting depth exceeded');
    const end = this.delimitedEnd();
    const outer = this.len;
    this.len = end;
    return outer;
  }

  /** Leaves a nested message: it must have been read to its end exactly. */
  leave(outer: number): void {
    if (this.pos !== this.len) throw indexOutOfRange(this);
    this.len = outer;
  }
}

/** Floats are read through a copy: no DataView made (or kept) per buffer. */
const scratch = new Uint8Array(8);
const scratchView = new DataView(scratch.buffer);

/** A map entry's key `__proto__` must become an own property, not the object's prototype. */
export function setMapEntry(map: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(map, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    map[key] = value;
  }
}
