import { messageCodec } from '../../codec';
import { utf8 } from '../../wire-reader';

/**
 * A DiscoveryResponse read at the wire level, without decoding its resources: enough to tell
 * that its resources are byte-for-byte those of an earlier response.
 */
export interface ResponseShape {
  readonly typeUrl: string;
  readonly versionInfo: string;
  readonly nonce: string;
  readonly resourceCount: number;
  /** Every `resources` entry, keys included: one contiguous view into the message. */
  readonly resources: Uint8Array;
}

const VERSION_INFO = 1;
const RESOURCES = 2;
const CANARY = 3;
const TYPE_URL = 4;
const NONCE = 5;
const CONTROL_PLANE = 6;
const controlPlaneCodec = messageCodec('envoy.config.core.v3.ControlPlane');

/**
 * Scans a serialized DiscoveryResponse. Returns undefined for anything unusual (resources not
 * contiguous, unexpected wire types, truncation): the caller then decodes it the normal way.
 */
export function scanResponse(bytes: Uint8Array): ResponseShape | undefined {
  const end = bytes.length;
  let pos = 0;
  const varint = (): number => {
    let result = 0;
    for (let shift = 0; shift <= 49; shift += 7) {
      if (pos >= end) return -1;
      const b = bytes[pos++]!;
      result += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return result;
    }
    return -1;
  };
  const text = (from: number, to: number) => utf8(bytes, from, to);
  let typeUrl = '';
  let versionInfo = '';
  let nonce = '';
  let count = 0;
  let first = -1;
  let last = -1;
  while (pos < end) {
    const keyAt = pos;
    const key = varint();
    if (key < 0) return undefined;
    const field = Math.floor(key / 8);
    const wire = key & 7;
    // protobufjs reads a known field whatever its wire type: a known field with an unexpected
    // one is left to the full decode, so both paths always agree.
    if (field === CANARY ? wire !== 0 : field <= CONTROL_PLANE && wire !== 2) return undefined;
    if (wire === 0) {
      if (varint() < 0) return undefined;
      continue;
    }
    if (wire === 1 || wire === 5) {
      pos += wire === 1 ? 8 : 4;
      if (pos > end) return undefined;
      continue;
    }
    if (wire !== 2) return undefined;
    const len = varint();
    if (len < 0 || pos + len > end) return undefined;
    const from = pos;
    pos += len;
    if (field === RESOURCES) {
      if (first < 0) first = keyAt;
      else if (last !== keyAt) return undefined; // interleaved with other fields
      last = pos;
      count++;
    } else if (field === VERSION_INFO) versionInfo = text(from, pos);
    else if (field === TYPE_URL) typeUrl = text(from, pos);
    else if (field === NONCE) nonce = text(from, pos);
    else if (field === CONTROL_PLANE && !decodes(bytes.subarray(from, pos))) return undefined;
  }
  const resources = first < 0 ? bytes.subarray(0, 0) : bytes.subarray(first, last);
  return { typeUrl, versionInfo, nonce, resourceCount: count, resources };
}

/** Whether a control_plane body decodes (a response whose body does not is dropped). */
function decodes(body: Uint8Array): boolean {
  try {
    controlPlaneCodec.decode(body);
    return true;
  } catch {
    return false;
  }
}
