// The RBAC engine (gRFC A41): decides whether one RPC passes one RBAC filter's policies. Pure:
// it sees the RPC only through RbacRequest (request.ts), which the server builds from the call.
// Policies are compiled once per validated RbacRules object: each permission and principal to a
// test (matchers.ts, permissions.ts, principals.ts).
import type { RbacRules } from '../../resources/rbac/update';
import { compileMatcher } from './matchers';
import type { RbacRequest } from './request';
import type { Test } from './predicates';

export type RbacDecision = (
  { readonly allowed: true } | { readonly allowed: false; readonly reason: string }
) & {
  /** The policy that matched, for audit logging (A59); absent when none did. */
  readonly matchedPolicy?: string;
};

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
    if (!matched) {
      return this.action === 'ALLOW'
        ? { allowed: false, reason: 'no ALLOW policy matched' }
        : { allowed: true };
    }
    const matchedPolicy = matched.name;
    return this.action === 'ALLOW'
      ? { allowed: true, matchedPolicy }
      : { allowed: false, reason: `DENY policy "${matched.name}" matched`, matchedPolicy };
  }
}
