// Small conversions every resource validator needs. Pure functions.
import { isIP } from 'node:net';
import type { CidrRange, ConfigSource, Duration, Int64 } from '../generated/protos';
import type { DecodeResult } from './resource-type';
import { ValidationErrors } from '../validation-errors';
import { utf8 } from '../wire-reader';

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
  // The two members read directly (a decoded unset message member is null): this runs once per
  // cluster on the hot path.
  return source.ads !== null || source.self !== null;
}

/** A CIDR range with a normalized prefix length. */
export interface CidrRangeConfig {
  readonly addressPrefix: string;
  readonly prefixLen: number;
}

/**
 * Validates a CidrRange at the current path; undefined when invalid. An unset `prefix_len` means
 * `unsetPrefixLen`: the whole address for a filter chain match (A36), 0 for RBAC (Envoy's
 * default, as C-core and grpc-go read it).
 */
export function validateCidrRange(
  range: CidrRange,
  errors: ValidationErrors,
  unsetPrefixLen: 'full' | 0,
): CidrRangeConfig | undefined {
  const family = isIP(range.addressPrefix);
  if (family === 0) {
    errors.addAt('address_prefix', `not an IP address: "${range.addressPrefix}"`);
    return undefined;
  }
  const full = family === 4 ? 32 : 128;
  const len = range.prefixLen?.value ?? (unsetPrefixLen === 'full' ? full : 0);
  if (len > full) {
    errors.addAt('prefix_len', `${len} is more than ${full}`);
    return undefined;
  }
  return Object.freeze({ addressPrefix: range.addressPrefix, prefixLen: len });
}

/**
 * A module loaded the first time the returned function is called, not with the package
 * (decision 0080): a resource type's validator loads when the type's first request is written
 * (`prepare`, decision 0086), or else with its first resource.
 */
export function onFirstUse<M>(load: () => M): () => M {
  let loaded: M | undefined;
  return () => (loaded ??= load());
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
 * Reads the name of an xDS resource (field 1, a string, in every xDS type) from its bytes
 * without decoding them, so the client can find the cache entry and skip an unchanged or
 * unsubscribed resource before paying for a full decode.
 *
 * Only a leading field 1 counts: encoders write fields in number order, so a well-formed
 * resource starts with its name. Anything else gives undefined ("decode to know"). A name read
 * here is a hint: protobufjs decodes known fields whatever their wire type, so on malformed
 * bytes a full decode may see another name, and the client checks the two agree.
 */
export function peekNameField(bytes: Uint8Array): string | undefined {
  if (bytes.length < 2 || bytes[0] !== 0x0a) return undefined; // field 1, length-delimited
  let len = 0;
  let pos = 1;
  for (let shift = 0; ; shift += 7) {
    if (pos >= bytes.length || shift > 28) return undefined;
    const b = bytes[pos++]!;
    len += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  if (pos + len > bytes.length) return undefined;
  // Decoded in place: no Buffer view made per resource (a response names thousands).
  const name = utf8(bytes, pos, pos + len);
  // Invalid UTF-8: decoders differ in how they replace it, so let decode say.
  return name.includes('\uFFFD') ? undefined : name;
}
