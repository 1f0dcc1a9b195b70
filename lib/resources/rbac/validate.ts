// RBAC filter config and RBACPerRoute override → RbacConfig, or every problem found (gRFC A41).
// What gRPC cannot enforce is an error, so that the Listener or RouteConfiguration carrying it
// is NACKed rather than enforced differently from what the control plane meant: CEL conditions,
// match trees, `grpc-*` and `:scheme` headers, filter state, custom matchers, and audit loggers
// of types not registered (audit.ts).
import {
  RBAC_Action,
  type envoy_config_rbac_v3_RBAC as RbacRulesProto,
  type envoy_extensions_filters_http_rbac_v3_RBAC as RbacFilterProto,
  type HeaderMatcher,
  type PathMatcher,
  type Permission,
  type Policy,
  type Principal,
} from '../../generated/protos';
import type { ValidationErrors } from '../../validation-errors';
import { decodeMessage } from '../any';
import { validateCidrRange } from '../common';
import { validateAuditOptions } from './audit';
import { validateHeaderMatcher, validateStringMatcher } from '../route-config/matchers';
import type { StringMatch } from '../route-config/update';
import type { RbacConfig, RbacMatcher, RbacPolicy, RbacRules } from './update';

export const RBAC_FILTER_TYPE = 'envoy.extensions.filters.http.rbac.v3.RBAC';
export const RBAC_PER_ROUTE_TYPE = 'envoy.extensions.filters.http.rbac.v3.RBACPerRoute';

/** Enforces nothing: no rules, a LOG action, or an override turning the filter off. */
const NO_RULES: RbacConfig = Object.freeze({ rules: undefined });

function decoded<K extends typeof RBAC_FILTER_TYPE | typeof RBAC_PER_ROUTE_TYPE>(
  typeName: K,
  value: Uint8Array | undefined,
  errors: ValidationErrors,
) {
  // A TypedStruct carries JSON, which gRPC does not read for RBAC (nor does C-core).
  if (value === undefined) {
    errors.add(`unsupported value TypedStruct for ${typeName}`);
    return undefined;
  }
  return decodeMessage(typeName, value, errors);
}

/** The RBAC filter's own config (an `http_filters[i].typed_config`) at the current path. */
export function validateRbacFilterConfig(
  value: Uint8Array | undefined,
  errors: ValidationErrors,
): RbacConfig | undefined {
  const filter = decoded(RBAC_FILTER_TYPE, value, errors);
  return filter && validateRbacFilter(filter, errors);
}

function validateRbacFilter(filter: RbacFilterProto, errors: ValidationErrors): RbacConfig {
  // A match tree replaces `rules` in Envoy; gRPC cannot evaluate one, and ignoring it would
  // enforce nothing, so refuse it. Shadow rules are never enforced: ignored (A41).
  if (filter.matcher) errors.addAt('matcher', 'RBAC match trees are not supported');
  if (!filter.rules) return NO_RULES;
  const rules = errors.field('rules', () => validateRules(filter.rules!, errors));
  return Object.freeze({ rules });
}

/** An `RBACPerRoute` override at the current path: without `rbac` the filter is off. */
export function validateRbacPerRoute(
  value: Uint8Array | undefined,
  errors: ValidationErrors,
): RbacConfig | undefined {
  const perRoute = decoded(RBAC_PER_ROUTE_TYPE, value, errors);
  if (!perRoute) return undefined;
  if (!perRoute.rbac) return NO_RULES;
  return errors.field('rbac', () => validateRbacFilter(perRoute.rbac!, errors));
}

function validateRules(rules: RbacRulesProto, errors: ValidationErrors): RbacRules | undefined {
  const before = errors.count;
  const options = rules.auditLoggingOptions;
  const audit =
    options && errors.field('audit_logging_options', () => validateAuditOptions(options, errors));
  const policies = new Map<string, RbacPolicy>();
  for (const name of Object.keys(rules.policies).sort()) {
    const policy = errors.field(`policies[${name}]`, () =>
      validatePolicy(rules.policies[name]!, errors),
    );
    if (policy) policies.set(name, policy);
  }
  let action: RbacRules['action'] | undefined;
  switch (rules.action) {
    case RBAC_Action.ALLOW:
      action = 'ALLOW';
      break;
    case RBAC_Action.DENY:
      action = 'DENY';
      break;
    case RBAC_Action.LOG:
      // A41: a LOG policy is ignored entirely, as if there were no RBAC filter.
      return undefined;
    default:
      errors.addAt('action', `unknown value ${rules.action}`);
  }
  if (errors.count > before || action === undefined) return undefined;
  return Object.freeze({ action, policies, ...(audit ? { audit } : {}) });
}

function validatePolicy(policy: Policy, errors: ValidationErrors): RbacPolicy | undefined {
  // A41: gRPC has no CEL, so a condition it would skip could allow what the policy forbids.
  if (policy.condition) errors.addAt('condition', 'CEL conditions are not supported');
  if (policy.checkedCondition)
    errors.addAt('checked_condition', 'CEL conditions are not supported');
  const permissions = errors.field('permissions', () =>
    validateList(policy.permissions, errors, validatePermission),
  );
  const principals = errors.field('principals', () =>
    validateList(policy.principals, errors, validatePrincipal),
  );
  if (!permissions || !principals) return undefined;
  return Object.freeze({ permissions, principals });
}

/** A repeated field that must be non-empty; undefined when it is empty or an item is invalid. */
function validateList<T>(
  items: readonly T[],
  errors: ValidationErrors,
  validateItem: (item: T, errors: ValidationErrors) => RbacMatcher | undefined,
): readonly RbacMatcher[] | undefined {
  if (items.length === 0) {
    errors.add('must be non-empty');
    return undefined;
  }
  const out: RbacMatcher[] = [];
  let ok = true;
  items.forEach((item, i) => {
    const matcher = errors.index(i, () => validateItem(item, errors));
    if (matcher) out.push(matcher);
    else ok = false;
  });
  return ok ? Object.freeze(out) : undefined;
}

function validatePermission(
  permission: Permission,
  errors: ValidationErrors,
): RbacMatcher | undefined {
  switch (permission.rule) {
    case 'andRules':
    case 'orRules': {
      const field = permission.rule === 'andRules' ? 'and_rules' : 'or_rules';
      const set = permission[permission.rule]!;
      const matchers = errors.field(field, () =>
        errors.field('rules', () => validateList(set.rules, errors, validatePermission)),
      );
      return matchers && freeze({ type: permission.rule === 'andRules' ? 'and' : 'or', matchers });
    }
    case 'notRule': {
      const matcher = errors.field('not_rule', () =>
        validatePermission(permission.notRule!, errors),
      );
      return matcher && freeze({ type: 'not', matcher });
    }
    case 'any':
      return validateAny(permission.any!, errors);
    case 'header':
      return errors.field('header', () => validateHeader(permission.header!, errors));
    case 'urlPath':
      return errors.field('url_path', () => validateUrlPath(permission.urlPath!, errors));
    case 'metadata':
      return freeze({ type: 'metadata', invert: permission.metadata!.invert });
    case 'destinationIp': {
      const range = errors.field('destination_ip', () =>
        validateCidrRange(permission.destinationIp!, errors, 0),
      );
      return range && freeze({ type: 'destination_ip', range });
    }
    case 'destinationPort': {
      const port = permission.destinationPort!;
      if (port > 65535) {
        errors.addAt('destination_port', `${port} is more than 65535`);
        return undefined;
      }
      return freeze({ type: 'destination_port', start: port, end: port + 1 });
    }
    case 'destinationPortRange': {
      const { start, end } = permission.destinationPortRange!;
      if (start >= end) {
        errors.addAt('destination_port_range', 'start must be less than end');
        return undefined;
      }
      return freeze({ type: 'destination_port', start, end });
    }
    case 'requestedServerName': {
      const name = errors.field('requested_server_name', () =>
        validateStringMatcher(permission.requestedServerName!, errors),
      );
      return name && freeze({ type: 'requested_server_name', name });
    }
    case 'matcher':
    case 'uriTemplate':
      errors.addAt(
        permission.rule === 'matcher' ? 'matcher' : 'uri_template',
        'extension matchers are not supported',
      );
      return undefined;
    default:
      errors.addAt('rule', 'field not present');
      return undefined;
  }
}

function validatePrincipal(
  principal: Principal,
  errors: ValidationErrors,
): RbacMatcher | undefined {
  switch (principal.identifier) {
    case 'andIds':
    case 'orIds': {
      const field = principal.identifier === 'andIds' ? 'and_ids' : 'or_ids';
      const set = principal[principal.identifier]!;
      const matchers = errors.field(field, () =>
        errors.field('ids', () => validateList(set.ids, errors, validatePrincipal)),
      );
      return (
        matchers && freeze({ type: principal.identifier === 'andIds' ? 'and' : 'or', matchers })
      );
    }
    case 'notId': {
      const matcher = errors.field('not_id', () => validatePrincipal(principal.notId!, errors));
      return matcher && freeze({ type: 'not', matcher });
    }
    case 'any':
      return validateAny(principal.any!, errors);
    case 'authenticated': {
      const name = principal.authenticated!.principalName;
      if (!name) return freeze({ type: 'authenticated' });
      const principalName = errors.field('authenticated', () =>
        errors.field('principal_name', () => validateStringMatcher(name, errors)),
      );
      return principalName && freeze({ type: 'authenticated', principalName });
    }
    case 'sourceIp':
    case 'directRemoteIp':
    case 'remoteIp': {
      // A41: all three are the connection's peer address (no PROXY protocol, no XFF in gRPC).
      const field = {
        sourceIp: 'source_ip',
        directRemoteIp: 'direct_remote_ip',
        remoteIp: 'remote_ip',
      }[principal.identifier];
      const range = errors.field(field, () =>
        validateCidrRange(principal[principal.identifier as 'sourceIp']!, errors, 0),
      );
      return range && freeze({ type: 'source_ip', range });
    }
    case 'header':
      return errors.field('header', () => validateHeader(principal.header!, errors));
    case 'urlPath':
      return errors.field('url_path', () => validateUrlPath(principal.urlPath!, errors));
    case 'metadata':
      return freeze({ type: 'metadata', invert: principal.metadata!.invert });
    case 'filterState':
      errors.addAt('filter_state', 'filter state is not supported');
      return undefined;
    default:
      errors.addAt('identifier', 'field not present');
      return undefined;
  }
}

function freeze(matcher: RbacMatcher): RbacMatcher {
  return Object.freeze(matcher);
}

/** `any` must be true (Envoy's own constraint); `false` would read as "matches everything". */
function validateAny(any: boolean, errors: ValidationErrors): RbacMatcher | undefined {
  if (!any) {
    errors.addAt('any', 'must be true');
    return undefined;
  }
  return freeze({ type: 'any' });
}

/**
 * A41: `grpc-*` headers and `:scheme` cannot be matched consistently across gRPC
 * implementations, so a matcher naming one is an error; `host` is `:authority`.
 */
function validateHeader(header: HeaderMatcher, errors: ValidationErrors): RbacMatcher | undefined {
  const name = header.name.toLowerCase();
  if (name.startsWith('grpc-') || name === ':scheme') {
    errors.addAt('name', `header "${header.name}" cannot be matched by RBAC`);
    return undefined;
  }
  const match = validateHeaderMatcher(header, errors);
  if (!match) return undefined;
  const renamed = name === 'host' ? { ...match, name: ':authority' } : match;
  return freeze({ type: 'header', header: Object.freeze(renamed) });
}

function validateUrlPath(path: PathMatcher, errors: ValidationErrors): RbacMatcher | undefined {
  if (!path.path) {
    errors.addAt('path', 'field not present');
    return undefined;
  }
  const match: StringMatch | undefined = errors.field('path', () =>
    validateStringMatcher(path.path!, errors),
  );
  return match && freeze({ type: 'url_path', path: Object.freeze(match) });
}
