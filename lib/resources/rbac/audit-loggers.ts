// gRFC A59's audit logger registry: the logger types an RBAC filter's `audit_logging_options`
// may name besides the built-in `stdout_logger`. Validation reads it (a non-optional logger of
// an unregistered type, or a config its factory rejects, NACKs the resource); the grpc
// plugin's server builds the loggers from it. Process-wide, as in every gRPC (decision 0046).

/** What an audit logger is told of one RPC's authorization decision (A59's audit context). */
export interface AuditEvent {
  /** `/package.Service/Method`. */
  readonly rpcMethod: string;
  /** The client certificate's identity (first URI SAN, else DNS SAN, else subject); '' without. */
  readonly principal: string;
  /** The RBAC HTTP filter's name (`http_filters[].name`). */
  readonly policyName: string;
  /** The RBAC policy that matched; '' when none did. */
  readonly matchedRule: string;
  /** Whether this RBAC filter allowed the RPC. */
  readonly authorized: boolean;
}

/** Logs audit events. Called synchronously on the RPC's path: it must not block. */
export interface AuditLogger {
  log(event: AuditEvent): void;
}

/** A type of audit logger, registered with `registerAuditLoggerFactory`. */
export interface AuditLoggerFactory<Config = unknown> {
  /**
   * The logger type: a TypedStruct's `type_url` names it by its last segment
   * (`type.googleapis.com/example.MyLogger` → `example.MyLogger`).
   */
  readonly name: string;
  /** Checks the TypedStruct's value (JSON); throws an Error saying what is wrong. */
  parseConfig(config: Readonly<Record<string, unknown>>): Config;
  /** A logger for a config `parseConfig` returned. Must not throw. */
  build(config: Config): AuditLogger;
}

/** The built-in logger's name (A59): JSON lines on stdout. */
export const STDOUT_AUDIT_LOGGER = 'stdout_logger';

const factories = new Map<string, AuditLoggerFactory>();

/**
 * Registers an audit logger type for RBAC filters' `audit_logging_options` (gRFC A59). Call it
 * before the server receives its Listener: a resource already validated is not validated again.
 * A later registration of the same name replaces the earlier one.
 */
export function registerAuditLoggerFactory<Config>(factory: AuditLoggerFactory<Config>): void {
  if (typeof factory?.name !== 'string' || factory.name === '') {
    throw new TypeError('an audit logger factory needs a non-empty name');
  }
  if (typeof factory.parseConfig !== 'function' || typeof factory.build !== 'function') {
    throw new TypeError(`audit logger factory ${factory.name} needs parseConfig and build`);
  }
  factories.set(factory.name, factory as AuditLoggerFactory);
}

/** The registered factory of this name, if any. */
export function auditLoggerFactory(name: string): AuditLoggerFactory | undefined {
  return factories.get(name);
}
