// The validated, immutable form of an RBAC HTTP filter config or its per-route override
// (gRFC A41), as the grpc plugin's server side enforces it. Rules: docs/server.md ("RBAC").
import type { CidrRangeConfig } from '../common';
import type { HeaderMatch, StringMatch } from '../matcher-update';

/** An RBAC filter config (`RBAC`) or override (`RBACPerRoute.rbac`). */
export interface RbacConfig {
  /**
   * The policies to enforce; undefined when the filter enforces nothing: `rules` absent, its
   * action `LOG` (A41), or an `RBACPerRoute` without `rbac` (the filter is off for the route).
   */
  readonly rules: RbacRules | undefined;
}

export interface RbacRules {
  /** ALLOW: an RPC is allowed iff some policy matches it. DENY: iff none does. */
  readonly action: 'ALLOW' | 'DENY';
  /** By policy name. Empty: ALLOW denies everything, DENY allows everything. */
  readonly policies: ReadonlyMap<string, RbacPolicy>;
  /** `audit_logging_options` (gRFC A59); undefined when nothing is to be logged. */
  readonly audit?: RbacAudit | undefined;
}

/** When to log this filter's decisions, and to which loggers (A59). */
export interface RbacAudit {
  /** A decision is logged when it denies (ON_DENY), allows (ON_ALLOW), or either. */
  readonly condition: 'ON_DENY' | 'ON_ALLOW' | 'ON_DENY_AND_ALLOW';
  /** Non-empty: the loggers kept (an optional logger of an unsupported type is skipped). */
  readonly loggers: readonly AuditLoggerConfig[];
}

/** One audit logger: its registered type's name, and the config its factory parsed. */
export interface AuditLoggerConfig {
  /** `stdout_logger` for the built-in StdoutAuditLog. */
  readonly name: string;
  readonly config: unknown;
}

/** Matches when one of its permissions and one of its principals match. Both are non-empty. */
export interface RbacPolicy {
  readonly permissions: readonly RbacMatcher[];
  readonly principals: readonly RbacMatcher[];
}

/**
 * One permission or principal. The two share their combinators and most kinds; validation keeps
 * each kind where the proto allows it (`destination_*` and `requested_server_name` are
 * permissions, `authenticated` and `source_ip` principals).
 */
export type RbacMatcher =
  /** `and_rules` / `and_ids`: all match. `or_rules` / `or_ids`: one matches. Non-empty. */
  | { readonly type: 'and' | 'or'; readonly matchers: readonly RbacMatcher[] }
  /** `not_rule` / `not_id`. */
  | { readonly type: 'not'; readonly matcher: RbacMatcher }
  | { readonly type: 'any' }
  /** `header`: `host` is read as `:authority`; `grpc-*` and `:scheme` are refused (A41). */
  | { readonly type: 'header'; readonly header: HeaderMatch }
  /** `url_path`: the RPC's `/service/method`. */
  | { readonly type: 'url_path'; readonly path: StringMatch }
  /**
   * `metadata`: Envoy's dynamic metadata, always empty in gRPC, so it never matches a value;
   * with `invert` it always matches (as C-core and grpc-go).
   */
  | { readonly type: 'metadata'; readonly invert: boolean }
  /** `destination_ip`: the connection's local address. */
  | { readonly type: 'destination_ip'; readonly range: CidrRangeConfig }
  /** `destination_port` (start = port, end = port + 1) or `destination_port_range`: [start, end). */
  | { readonly type: 'destination_port'; readonly start: number; readonly end: number }
  /** `requested_server_name`: gRPC reads it as the empty string (A41). */
  | { readonly type: 'requested_server_name'; readonly name: StringMatch }
  /** `authenticated`: a TLS connection; with a name, matched against the peer certificate. */
  | { readonly type: 'authenticated'; readonly principalName?: StringMatch }
  /** `source_ip`, `direct_remote_ip` and `remote_ip`: all the connection's peer address (A41). */
  | { readonly type: 'source_ip'; readonly range: CidrRangeConfig };
