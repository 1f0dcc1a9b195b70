// gRFC A59 on the server: the audit loggers an RBAC filter's decision goes to, when its audit
// condition holds. Loggers are built once per validated RbacAudit, from the registry
// (lib/resources/rbac/audit-loggers.ts) or, for `stdout_logger`, the built-in one.
import {
  auditLoggerFactory,
  STDOUT_AUDIT_LOGGER,
  type AuditEvent,
  type AuditLogger,
} from '../../resources/rbac/audit-loggers';
import type { RbacAudit } from '../../resources/rbac/update';
import { errorReason } from '../../errors';
import { logError } from '../../trace';

/** A59's built-in logger: one JSON line per event on stdout, timestamped when logged. */
const stdoutLogger: AuditLogger = {
  log(event) {
    const entry = {
      grpc_audit_log: {
        timestamp: new Date().toISOString(),
        rpc_method: event.rpcMethod,
        principal: event.principal,
        policy_name: event.policyName,
        matched_rule: event.matchedRule,
        authorized: event.authorized,
      },
    };
    process.stdout.write(`${JSON.stringify(entry)}\n`);
  },
};

const built = new WeakMap<RbacAudit, readonly AuditLogger[]>();

function loggersOf(audit: RbacAudit): readonly AuditLogger[] {
  let loggers = built.get(audit);
  if (!loggers) {
    loggers = audit.loggers.flatMap(({ name, config }) => {
      const factory = auditLoggerFactory(name);
      if (factory) {
        // A59: a logger cannot affect the RPC, not even one that fails to be built. Not built
        // means not logged to: said once, as the list is kept for this config.
        try {
          return [factory.build(config)];
        } catch (e) {
          logError(`RBAC audit logger ${name} could not be built: ${errorReason(e)}`);
          return [];
        }
      }
      return name === STDOUT_AUDIT_LOGGER ? [stdoutLogger] : [];
    });
    built.set(audit, loggers);
  }
  return loggers;
}

/** Whether `condition` asks for a decision that allowed (or denied) to be logged. */
function wanted(condition: RbacAudit['condition'], authorized: boolean): boolean {
  return condition === 'ON_DENY_AND_ALLOW' || (condition === 'ON_ALLOW') === authorized;
}

/** Logs one decision to every logger of `audit` when its condition holds. Never throws. */
export function auditDecision(audit: RbacAudit | undefined, event: AuditEvent): void {
  if (!audit || !wanted(audit.condition, event.authorized)) return;
  for (const logger of loggersOf(audit)) {
    try {
      logger.log(event);
    } catch {
      // A59: a logger cannot affect the RPC; its failure is its own.
    }
  }
}
