// The request hash of gRFC A42: a route's `hash_policy` list, evaluated per RPC by the
// ConfigSelector, gives the 64-bit XXH64-based hash that the ring_hash policy looks up on its
// ring. Compiled once per Route object (the client hands out the same frozen Route until the
// RouteConfiguration changes).
import type { Metadata } from '@grpc/grpc-js';
import { compileSafeRegex, type HashPolicy, type Route } from '../../resources/route-config';
import { xxh64 } from '../xxhash64';
import { headerValue } from './headers';

const MASK_64 = (1n << 64n) - 1n;

/** One policy's hash for an RPC, or undefined when it produces none (A42: "no result"). */
type PolicyHash = (metadata: Metadata, channelId: number) => bigint | undefined;

interface CompiledPolicy {
  readonly hash: PolicyHash;
  readonly terminal: boolean;
}

/** Compiled policies per Route; a route without policies maps to an empty list. */
const cache = new WeakMap<Route, readonly CompiledPolicy[]>();

/**
 * The request hash of an RPC routed by `route`, as a decimal string of an unsigned 64-bit
 * value, or undefined when the route has no hash policies that gRPC supports (then the
 * ring_hash picker chooses at random itself, gRFC A76). When the route has policies and none
 * produces a hash, the hash is random (A42), drawn from `random` (two 32-bit draws).
 */
export function requestHash(
  route: Route,
  metadata: Metadata,
  channelId: number,
  random: () => number = Math.random,
): string | undefined {
  // The common case first, without a cache lookup: no hash policies at all.
  const action = route.action;
  if (action.type !== 'cluster' && action.type !== 'weighted_clusters') return undefined;
  if (action.hashPolicies.length === 0) return undefined;
  let policies = cache.get(route);
  if (policies === undefined) {
    policies = compilePolicies(route);
    cache.set(route, policies);
  }
  if (policies.length === 0) return undefined;
  let hash: bigint | undefined;
  try {
    hash = combine(policies, metadata, channelId);
  } catch {
    // Nothing may throw into grpc-js's call path; a policy that cannot evaluate gives no hash.
  }
  return (hash ?? randomHash(random)).toString();
}

/** `hash << 1 | hash >>> 63` on 64 bits. */
export function rotateLeft1(hash: bigint): bigint {
  return ((hash << 1n) | (hash >> 63n)) & MASK_64;
}

/**
 * A42 (as Envoy does it): each policy that produces a hash is folded in with
 * `hash = rotl64(hash, 1) ^ policyHash`; a `terminal` policy ends the list once there is a hash.
 */
function combine(
  policies: readonly CompiledPolicy[],
  metadata: Metadata,
  channelId: number,
): bigint | undefined {
  let hash: bigint | undefined;
  for (const policy of policies) {
    const next = policy.hash(metadata, channelId);
    if (next !== undefined) hash = hash === undefined ? next : rotateLeft1(hash) ^ next;
    if (policy.terminal && hash !== undefined) break;
  }
  return hash;
}

function randomHash(random: () => number): bigint {
  const high = Math.floor(random() * 0x1_0000_0000) >>> 0;
  const low = Math.floor(random() * 0x1_0000_0000) >>> 0;
  return (BigInt(high) << 32n) | BigInt(low);
}

function compilePolicies(route: Route): readonly CompiledPolicy[] {
  const action = route.action;
  if (action.type !== 'cluster' && action.type !== 'weighted_clusters') return [];
  return action.hashPolicies.map(compilePolicy);
}

function compilePolicy(policy: HashPolicy): CompiledPolicy {
  if (policy.type === 'channel_id') {
    // grpc-js draws the channel id uniformly from [0, 2^53): hashing its decimal form spreads
    // channels over the whole 64-bit ring, where the raw value would only cover its start.
    let cachedId: number | undefined;
    let cachedHash = 0n;
    return {
      terminal: policy.terminal,
      hash: (_metadata, channelId) => {
        if (channelId !== cachedId) {
          cachedId = channelId;
          cachedHash = xxh64(String(channelId));
        }
        return cachedHash;
      },
    };
  }
  const name = policy.headerName.toLowerCase();
  const rewrite = policy.regexRewrite ? compileRewrite(policy.regexRewrite) : identity;
  return {
    terminal: policy.terminal,
    hash: (metadata) => {
      // A42: read as route matching reads headers (`-bin` headers count as absent).
      const value = headerValue(metadata, name);
      if (value === undefined) return undefined;
      const rewritten = rewrite(value);
      return rewritten === undefined ? undefined : xxh64(rewritten);
    },
  };
}

const identity = (value: string): string => value;

/**
 * `regex_rewrite`: every match of the pattern is replaced by the substitution, in RE2's (and
 * Envoy's) syntax: `\0` … `\9` are the match and its groups, `\\` a backslash. A substitution
 * that names a group the pattern lacks leaves the value as it is, as RE2's GlobalReplace does;
 * a pattern RE2 refuses (never, after validation) makes the policy produce no hash.
 */
export function compileRewrite(rewrite: {
  readonly regex: string;
  readonly substitution: string;
}): (value: string) => string | undefined {
  const compiled = compileSafeRegex(rewrite.regex);
  if ('error' in compiled) return () => undefined;
  const regex = compiled.regex;
  const parts = parseSubstitution(rewrite.substitution);
  const groups = regex.groupCount();
  if (parts.some((part) => typeof part === 'number' && part > groups)) return identity;
  if (parts.every((part) => typeof part === 'string')) {
    const literal = parts.join('');
    return (value) => regex.matcher(value).replaceAll(() => literal);
  }
  return (value) =>
    regex.matcher(value).replaceAll((...args: unknown[]) => {
      let out = '';
      for (const part of parts) {
        if (typeof part === 'string') out += part;
        else out += (args[part] as string | null | undefined) ?? '';
      }
      return out;
    });
}

/** Literal text and group numbers, in order. An unknown escape is kept as written. */
function parseSubstitution(substitution: string): (string | number)[] {
  const parts: (string | number)[] = [];
  let literal = '';
  for (let i = 0; i < substitution.length; i++) {
    const c = substitution[i]!;
    const next = substitution[i + 1];
    if (c !== '\\' || next === undefined) {
      literal += c;
      continue;
    }
    if (next >= '0' && next <= '9') {
      if (literal) parts.push(literal);
      literal = '';
      parts.push(next.charCodeAt(0) - 48);
    } else if (next === '\\') {
      literal += '\\';
    } else {
      literal += c + next;
    }
    i++;
  }
  if (literal) parts.push(literal);
  return parts;
}
