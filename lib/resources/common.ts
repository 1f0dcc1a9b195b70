// Small conversions every resource validator needs. Pure functions.
import type { ConfigSource, Duration, Int64 } from '../generated/protos';
import type { DecodeResult } from './resource-type';
import { ValidationErrors } from './validation-errors';

/** A protobufjs 64-bit value as a JS number (exact up to 2^53). */
export function int64ToNumber(value: Int64): number {
  return typeof value === 'number' ? value : value.toNumber();
}

/** Duration limits shared by every gRPC xDS parser. */
const MAX_DURATION_SECONDS = 315_576_000_000;

/** Validates a google.protobuf.Duration at the current path and returns it in milliseconds. */
export function durationMs(duration: Duration, errors: ValidationErrors): number {
  const seconds = int64ToNumber(duration.seconds);
  let ok = true;
  if (seconds < 0 || seconds > MAX_DURATION_SECONDS) {
    errors.addAt('seconds', `must be in range [0, ${MAX_DURATION_SECONDS}]`);
    ok = false;
  }
  if (duration.nanos < 0 || duration.nanos > 999_999_999) {
    errors.addAt('nanos', 'must be in range [0, 999999999]');
    ok = false;
  }
  return ok ? seconds * 1000 + duration.nanos / 1e6 : 0;
}

/** gRPC accepts only ADS (`ads: {}`) or `self: {}` config sources for RDS, EDS and LRS. */
export function isAdsOrSelf(source: ConfigSource): boolean {
  // Not `source.configSourceSpecifier`: protobufjs computes oneof getters with Object.keys on
  // every read, and this runs once per cluster on the hot path.
  return source.ads !== null || source.self !== null;
}

/**
 * Runs a validator over decoded bytes and packages the outcome as a DecodeResult: bytes that do
 * not parse give a nameless error; a validator that throws (a bug) is reported, never rethrown.
 */
export function decodeAndValidate<M, T>(
  typeName: string,
  bytes: Uint8Array,
  decode: (bytes: Uint8Array) => M,
  nameOf: (message: M) => string,
  validate: (message: M, errors: ValidationErrors) => T,
): DecodeResult<T> {
  let message: M;
  try {
    message = decode(bytes);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    return {
      name: undefined,
      errors: [{ path: '', message: `can't parse ${typeName}: ${reason}` }],
    };
  }
  const name = nameOf(message);
  const errors = new ValidationErrors();
  let resource: T;
  try {
    resource = validate(message, errors);
  } catch (e) {
    errors.add(`internal error while validating: ${e instanceof Error ? e.message : String(e)}`);
    return { name, errors: errors.list() };
  }
  return errors.isEmpty ? { name, resource } : { name, errors: errors.list() };
}

/**
 * Reads field 1 (a string) from a serialized message without decoding it: the name of every
 * xDS resource type is field 1, so the client can find a resource's cache entry, and skip an
 * unchanged or unsubscribed one, before paying for a full decode. Returns undefined when the
 * bytes are not well-formed enough to tell.
 */
export function peekNameField(bytes: Uint8Array): string | undefined {
  let pos = 0;
  const end = bytes.length;
  const varint = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (pos >= end || shift > 49) return -1;
      const b = bytes[pos++]!;
      result += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return result;
      shift += 7;
    }
  };
  let name: string | undefined;
  while (pos < end) {
    const key = varint();
    if (key < 0) return undefined;
    const field = Math.floor(key / 8);
    const wire = key & 7;
    // protobufjs reads field 1 as a string whatever its wire type: leave odd cases to decode.
    if (field === 1 && wire !== 2) return undefined;
    if (wire === 0) {
      if (varint() < 0) return undefined;
    } else if (wire === 1) {
      pos += 8;
    } else if (wire === 5) {
      pos += 4;
    } else if (wire === 2) {
      const len = varint();
      if (len < 0 || pos + len > end) return undefined;
      // The last occurrence wins in protobuf, so keep scanning.
      if (field === 1) {
        name = Buffer.from(bytes.buffer, bytes.byteOffset + pos, len).toString('utf8');
        // Invalid UTF-8: decoders differ in how they replace it, so let decode say.
        if (name.includes('\uFFFD')) return undefined;
      }
      pos += len;
    } else {
      return undefined;
    }
  }
  return pos === end ? (name ?? '') : undefined;
}
