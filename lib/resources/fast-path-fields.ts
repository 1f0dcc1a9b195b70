// The steps every fast-path reader (endpoint-fast-path.ts, cluster-fast-path.ts) takes through a
// message's nested fields, over the scratch object it reads into: each reader gives up (returns
// false) on what it leaves to the generated decoder.
import type { WireReader } from '../wire-reader';

/** A fast path's scratch object: `read` has a bit for each message field read so far. */
export interface ReadFields {
  read: number;
}

/**
 * Marks the message field `bit` read: false when it was already. Protobuf merges a message field
 * given twice, the generated decoders replace it: the fast paths leave such bytes to them.
 */
export function once(f: ReadFields, bit: number): boolean {
  if (f.read & bit) return false;
  f.read |= bit;
  return true;
}

/** Reads the nested message at `r`'s position, one level below `d`, with `read`. */
export function nested<F>(
  r: WireReader,
  d: number,
  f: F,
  read: (r: WireReader, d: number, f: F) => boolean,
): boolean {
  const outer = r.enter(d + 1);
  if (!read(r, d + 1, f)) return false;
  r.leave(outer);
  return true;
}

/** A UInt32Value entered at `r`'s position, one level below `d`: an empty one is 0. */
export function readUInt32Value(r: WireReader, d: number): number {
  const outer = r.enter(d + 1);
  let value = 0;
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 8) value = r.uint32();
    else r.skip(t & 7, d + 1);
  }
  r.leave(outer);
  return value;
}
