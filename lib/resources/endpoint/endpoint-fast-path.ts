// The common case of an endpoint, read from its bytes straight into its validated LbEndpoint:
// an IPv4 `ip:port` with an optional weight, hostname and hash key. Large EDS responses are
// almost only these, and decoding each into five generated messages (LbEndpoint, Endpoint,
// Address, SocketAddress, UInt32Value) before validating them cost more than the reading
// (decision 0088). Anything else — IPv6, additional addresses, a proxy address, a message field
// given twice (protobuf merges it, the generated decoder replaces it), bytes that do not parse —
// returns FALL_BACK, and the caller decodes the endpoint again with the generated decoder for
// the scoped validator: it alone reports problems, so both paths accept exactly the same
// endpoints (spec/resources/endpoint-fast-path.spec.ts compares them).
import { messageCodec } from '../../codec';
import type { Metadata } from '../../generated/protos';
import type { WireReader } from '../../wire-reader';
import { nested, once, readUInt32Value } from '../fast-path-fields';
import { ipv4Key, ipv4Text, ipv4ValueOf } from './ipv4';
import { hasProxyAddress } from './proxy-address';
import type { EndpointHealthStatus, LbEndpoint } from './update';

const metadataCodec = messageCodec('envoy.config.core.v3.Metadata');

/** Indexed by the HealthStatus enum value. */
export const HEALTH_STATUSES: readonly EndpointHealthStatus[] = [
  'UNKNOWN',
  'HEALTHY',
  'UNHEALTHY',
  'DRAINING',
  'TIMEOUT',
  'DEGRADED',
];

export const FALL_BACK = Symbol('validate this endpoint with field paths');

/** Message fields read so far: a second one is FALL_BACK (see the top of this file). */
const ENDPOINT = 1;
const METADATA = 2;
const WEIGHT = 4;
const ADDRESS = 8;
const SOCKET_ADDRESS = 16;
const PORT = 32;

/** What one LbEndpoint's bytes say, as far as the fast path reads them. */
class EndpointFields {
  // Declared only: reset() sets each, the one place that says where it starts.
  declare read: number;
  declare health: number;
  declare weight: number;
  declare metadata: Metadata | null;
  // The address's bytes: made a string only once they are known to be an IPv4 literal.
  declare addressStart: number;
  declare addressEnd: number;
  declare port: number;
  declare hostname: string;

  constructor() {
    this.reset();
  }

  reset(): void {
    this.read = 0;
    this.health = 0;
    this.weight = 1;
    this.metadata = null;
    this.addressStart = 0;
    this.addressEnd = 0;
    this.port = 0;
    this.hostname = '';
  }
}

/** One for every endpoint read: reading is synchronous, and resets it first. */
const fields = new EndpointFields();

/**
 * The frozen endpoint whose LbEndpoint bytes run from `r`'s position to its `len`, its address's
 * key pushed on `ipv4Keys`; or FALL_BACK for anything the fast path does not decide (the reader
 * is then left anywhere, and may throw on bytes that do not parse: the caller rewinds).
 * Duplicate addresses are the validator's to find, in document order with the endpoints that
 * fell back, and only in the localities it keeps.
 */
export function readLbEndpoint(
  r: WireReader,
  d: number,
  ipv4Keys: number[],
): LbEndpoint | typeof FALL_BACK {
  const f = fields;
  f.reset();
  if (!readLbEndpointFields(r, d, f)) return FALL_BACK;
  const healthStatus = HEALTH_STATUSES[f.health];
  const port = f.port;
  if (
    healthStatus === undefined ||
    f.weight === 0 ||
    (f.read & (SOCKET_ADDRESS | PORT)) !== (SOCKET_ADDRESS | PORT) ||
    port < 1 ||
    port > 65535 ||
    hasProxyAddress(f.metadata)
  ) {
    return FALL_BACK;
  }
  const ip = ipv4ValueOf(r.buf, f.addressStart, f.addressEnd);
  if (ip < 0) return FALL_BACK;
  ipv4Keys.push(ipv4Key(ip, port));
  const result: { -readonly [K in keyof LbEndpoint]: LbEndpoint[K] } = {
    address: ipv4Text(r.buf, f.addressStart, f.addressEnd - f.addressStart),
    port,
    healthStatus,
    weight: f.weight,
  };
  if (f.hostname !== '') result.hostname = f.hostname;
  const hashKey = endpointHashKey(f.metadata);
  if (hashKey !== undefined) result.hashKey = hashKey;
  return Object.freeze(result);
}

// Each reader below takes one message's fields into `f`: false for what the fast path leaves to
// the generated decoder. Fields the validator does not read are skipped, as the generated
// decoder skips fields it does not know; a message it would decode (and could fail on) is left
// to it.

function readLbEndpointFields(r: WireReader, d: number, f: EndpointFields): boolean {
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 10) {
      if (!(once(f, ENDPOINT) && nested(r, d, f, readEndpointFields))) return false;
    } else if (t === 16) f.health = r.int32();
    else if (t === 26) {
      if (!once(f, METADATA)) return false;
      const outer = r.enter(d + 1);
      f.metadata = metadataCodec.read(r, d + 1);
      r.leave(outer);
    } else if (t === 34) {
      // load_balancing_weight: an empty UInt32Value is 0, which the validator rejects.
      if (!once(f, WEIGHT)) return false;
      f.weight = readUInt32Value(r, d);
    } else r.skip(t & 7, d); // endpoint_name, unknown fields
  }
  return true;
}

function readEndpointFields(r: WireReader, d: number, f: EndpointFields): boolean {
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 10) {
      if (!(once(f, ADDRESS) && nested(r, d, f, readAddress))) return false;
    } else if (t === 26) f.hostname = r.string();
    else if (t === 34)
      return false; // additional_addresses
    else r.skip(t & 7, d);
  }
  return true;
}

function readAddress(r: WireReader, d: number, f: EndpointFields): boolean {
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 10) {
      if (!(once(f, SOCKET_ADDRESS) && nested(r, d, f, readSocketAddress))) return false;
    } else if (t === 18)
      return false; // pipe
    else r.skip(t & 7, d);
  }
  return true;
}

function readSocketAddress(r: WireReader, d: number, f: EndpointFields): boolean {
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 18) {
      f.addressEnd = r.delimitedEnd();
      f.addressStart = r.pos;
      r.pos = f.addressEnd;
    } else if (t === 24) {
      f.port = r.uint32();
      f.read |= PORT;
    } else if (t === 34)
      return false; // named_port
    else r.skip(t & 7, d); // protocol, resolver_name, ipv4_compat, unknown fields
  }
  return true;
}

/**
 * gRFC A76: the `hash_key` string of the endpoint's `envoy.lb` filter metadata, as Envoy's ring
 * hash reads it. Anything else there (absent, empty, not a string) is ignored, never an error.
 */
export function endpointHashKey(metadata: Metadata | null): string | undefined {
  const value = metadata?.filterMetadata['envoy.lb']?.fields['hash_key'];
  return value?.kind === 'stringValue' && value.stringValue ? value.stringValue : undefined;
}
