// The RBAC engine (gRFC A41): decides whether one RPC passes one RBAC filter's policies. Pure:
// it sees the RPC only through RbacRequest, which the server builds from the call. Policies are
// compiled once per validated RbacRules object.
import type { Metadata } from '@grpc/grpc-js';
import type { RbacMatcher, RbacRules } from '../../resources/rbac/update';
import type { StringMatch } from '../../resources/route-config';
import { compileHeaderCondition, compileStringMatch } from '../routing/headers';
import { parseIp, prefixMatch, type Ip } from '../server-chains';
import { principalNames, type PeerIdentity } from './peer-identity';

/** What RBAC may look at of one RPC. */
export interface RbacRequest {
  /** `/package.Service/Method`: the `:path` header and `url_path`. */
  readonly path: string;
  /** The `:authority` header (or `host`, when the client sent no `:authority`). */
  readonly authority: string;
  /** The call's metadata as grpc-js hands it to server interceptors. */
  readonly metadata: Metadata;
  /** The connection's local address and port (`destination_ip`, `destination_port`). */
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  /** The connection's peer address (`source_ip`, `direct_remote_ip`, `remote_ip`). */
  readonly remoteAddress: string | undefined;
  /** Whether the connection uses TLS (`authenticated` needs it). */
  readonly tls: boolean;
  /** The verified client certificate's identity; undefined without one. */
  readonly peer: PeerIdentity | undefined;
}

export type RbacDecision =
  { readonly allowed: true } | { readonly allowed: false; readonly reason: string };

type Test = (request: RbacRequest) => boolean;

/**
 * grpc-js strips `content-type` from server metadata before interceptors run, and accepts only
 * gRPC content types; its clients send exactly this value (docs/server.md says so).
 */
const GRPC_CONTENT_TYPE = 'application/grpc';

/**
 * The value an RBAC header matcher sees (A41): pseudo-headers `:method` (always POST for
 * gRPC), `:authority` and `:path`; binary headers in base64; several values joined with ','.
 * `te` and other pseudo-headers count as absent.
 */
export function rbacHeaderValue(request: RbacRequest, name: string): string | undefined {
  switch (name) {
    case ':method':
      return 'POST';
    case ':authority':
      return request.authority;
    case ':path':
      return request.path;
    case 'content-type':
      return GRPC_CONTENT_TYPE;
    case 'te':
      return undefined;
  }
  if (name.startsWith(':')) return undefined;
  const values = request.metadata.get(name);
  if (values.length === 0) return undefined;
  return values.map((v) => (typeof v === 'string' ? v : v.toString('base64'))).join(',');
}

function stringTest(match: StringMatch): (value: string) => boolean {
  const compiled = compileStringMatch(match);
  if ('error' in compiled) throw new Error(compiled.error);
  return compiled;
}

function ipTest(
  range: { readonly addressPrefix: string; readonly prefixLen: number },
  address: (request: RbacRequest) => string | undefined,
): Test {
  // Parsed once per address string: connections are few, RPCs many.
  let last: { text: string | undefined; ip: Ip | undefined } = { text: undefined, ip: undefined };
  return (request) => {
    const text = address(request);
    if (text === undefined) return false;
    if (last.text !== text) last = { text, ip: parseIp(text) };
    return last.ip !== undefined && prefixMatch(range, last.ip) >= 0;
  };
}

function compileMatcher(matcher: RbacMatcher): Test {
  switch (matcher.type) {
    case 'and': {
      const tests = matcher.matchers.map(compileMatcher);
      return (request) => tests.every((t) => t(request));
    }
    case 'or': {
      const tests = matcher.matchers.map(compileMatcher);
      return (request) => tests.some((t) => t(request));
    }
    case 'not': {
      const test = compileMatcher(matcher.matcher);
      return (request) => !test(request);
    }
    case 'any':
      return () => true;
    case 'header': {
      const compiled = compileHeaderCondition(matcher.header, rbacHeaderValue);
      if ('error' in compiled) throw new Error(compiled.error);
      return compiled;
    }
    case 'url_path': {
      const test = stringTest(matcher.path);
      return (request) => test(request.path);
    }
    case 'metadata': {
      // Envoy metadata is always empty in gRPC: no value matches, so only `invert` matches.
      const result = matcher.invert;
      return () => result;
    }
    case 'destination_ip':
      return ipTest(matcher.range, (request) => request.localAddress);
    case 'destination_port': {
      const { start, end } = matcher;
      return (request) =>
        request.localPort !== undefined && request.localPort >= start && request.localPort < end;
    }
    case 'requested_server_name': {
      // A41: gRPC has no requested server name; it reads as the empty string.
      const result = stringTest(matcher.name)('');
      return () => result;
    }
    case 'authenticated': {
      const name = matcher.principalName;
      if (!name) return (request) => request.tls;
      const test = stringTest(name);
      return (request) => request.tls && principalNames(request.peer).some(test);
    }
    case 'source_ip':
      return ipTest(matcher.range, (request) => request.remoteAddress);
  }
}

interface CompiledPolicy {
  readonly name: string;
  readonly permission: Test;
  readonly principal: Test;
}

export class RbacEngine {
  private static readonly cache = new WeakMap<RbacRules, RbacEngine>();

  private constructor(
    private readonly action: RbacRules['action'],
    private readonly policies: readonly CompiledPolicy[],
  ) {}

  /**
   * The engine for validated rules, compiled once per RbacRules object. Throws only for rules
   * that did not come through our validator (a regex RE2 refuses).
   */
  static for(rules: RbacRules): RbacEngine {
    let engine = RbacEngine.cache.get(rules);
    if (!engine) {
      const policies = [...rules.policies].map(([name, policy]) => {
        const permissions = policy.permissions.map(compileMatcher);
        const principals = policy.principals.map(compileMatcher);
        return {
          name,
          permission: (r: RbacRequest) => permissions.some((t) => t(r)),
          principal: (r: RbacRequest) => principals.some((t) => t(r)),
        };
      });
      engine = new RbacEngine(rules.action, policies);
      RbacEngine.cache.set(rules, engine);
    }
    return engine;
  }

  /** ALLOW: allowed iff a policy matches. DENY: allowed iff none does. */
  decide(request: RbacRequest): RbacDecision {
    const matched = this.policies.find((p) => p.permission(request) && p.principal(request));
    if (this.action === 'ALLOW') {
      return matched ? { allowed: true } : { allowed: false, reason: 'no ALLOW policy matched' };
    }
    return matched
      ? { allowed: false, reason: `DENY policy "${matched.name}" matched` }
      : { allowed: true };
  }
}
