// The common case of an endpoint, validated without field-path scopes: an IPv4 `ip:port` with
// an optional weight, hostname and hash key. Large EDS responses are almost only these, and
// validating them through ValidationErrors' scopes (a closure and a path string per field) cost
// more than decoding them. Anything else — an error, IPv6, additional addresses — returns
// FALL_BACK, and the scoped validator does the endpoint again: it alone reports problems, so
// both paths accept exactly the same endpoints.
import type { LbEndpoint as LbEndpointProto } from '../../generated/protos';
import type { EndpointHealthStatus, LbEndpoint } from './update';

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

/**
 * The addresses claimed so far in one assignment: an IPv4 `ip:port` as the number
 * `ip * 65536 + port` (no string built and hashed per endpoint), any other as its canonical text.
 */
export type ClaimedAddresses = Set<string | number>;

/** The key of an IPv4 address (its 32-bit value, from `ipv4Value`) and port in ClaimedAddresses. */
export function ipv4Key(ip: number, port: number): number {
  return ip * 65536 + port;
}

/**
 * The frozen endpoint, claimed in `seen`; undefined for an endpoint to ignore (a health status
 * newer than our protos); FALL_BACK, with `seen` untouched, for anything the fast path does
 * not decide.
 */
export function fastLbEndpoint(
  proto: LbEndpointProto,
  seen: ClaimedAddresses,
): LbEndpoint | undefined | typeof FALL_BACK {
  const healthStatus = HEALTH_STATUSES[proto.healthStatus];
  if (healthStatus === undefined) return undefined;
  const weight = proto.loadBalancingWeight === null ? 1 : proto.loadBalancingWeight.value;
  const endpoint = proto.endpoint;
  if (weight === 0 || endpoint === null || endpoint.additionalAddresses.length > 0) {
    return FALL_BACK;
  }
  const socket = endpoint.address?.socketAddress;
  if (!socket || socket.portSpecifier !== 'portValue') return FALL_BACK;
  const port = socket.portValue;
  const address = socket.address;
  const ip = ipv4Value(address);
  if (port === null || port < 1 || port > 65535 || ip < 0) return FALL_BACK;
  const key = ipv4Key(ip, port);
  if (seen.has(key)) return FALL_BACK;
  seen.add(key);
  const result: { -readonly [K in keyof LbEndpoint]: LbEndpoint[K] } = {
    address,
    port,
    healthStatus,
    weight,
  };
  if (endpoint.hostname !== '') result.hostname = endpoint.hostname;
  const hashKey = endpointHashKey(proto);
  if (hashKey !== undefined) result.hashKey = hashKey;
  return Object.freeze(result);
}

/**
 * gRFC A76: the `hash_key` string of the endpoint's `envoy.lb` filter metadata, as Envoy's ring
 * hash reads it. Anything else there (absent, empty, not a string) is ignored, never an error.
 */
export function endpointHashKey(proto: LbEndpointProto): string | undefined {
  const value = proto.metadata?.filterMetadata['envoy.lb']?.fields['hash_key'];
  return value?.kind === 'stringValue' && value.stringValue ? value.stringValue : undefined;
}

/** Dotted-quad IPv4, each part 0–255 without leading zeros: what `net.isIP` calls 4. */
export function isIPv4(text: string): boolean {
  return ipv4Value(text) >= 0;
}

/** The 32-bit value of a dotted-quad IPv4 literal (as `isIPv4` accepts it), else -1. */
export function ipv4Value(text: string): number {
  let parts = 0;
  let value = 0;
  let digits = 0;
  let ip = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 46; // a final '.'
    if (c === 46) {
      if (digits === 0 || ++parts > 4) return -1;
      ip = ip * 256 + value;
      value = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits === 1 && value === 0) return -1; // a leading zero
      value = value * 10 + (c - 48);
      if (++digits > 3 || value > 255) return -1;
    } else {
      return -1;
    }
  }
  return parts === 4 ? ip : -1;
}
