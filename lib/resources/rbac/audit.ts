// An RBAC policy's `audit_logging_options` (gRFC A59) → RbacAudit. A logger is the built-in
// StdoutAuditLog or a TypedStruct naming a registered type; one of another type is skipped when
// `is_optional`, else an error (as an unsupported HTTP filter is, A39).
import { typeNameOfUrl } from '../../codec';
import {
  RBAC_AuditLoggingOptions_AuditCondition as Condition,
  type RBAC_AuditLoggingOptions as AuditOptionsProto,
  type RBAC_AuditLoggingOptions_AuditLoggerConfig as LoggerConfigProto,
} from '../../generated/protos';
import { type ValidationErrors } from '../../validation-errors';
import { errorReason } from '../../errors';
import { decodeAnyValue } from '../any';
import { EMPTY_CONFIG, structToJson } from '../struct';
import { auditLoggerFactory, STDOUT_AUDIT_LOGGER } from './audit-loggers';
import type { AuditLoggerConfig, RbacAudit } from './update';

const STDOUT_TYPE = 'envoy.extensions.rbac.audit_loggers.stream.v3.StdoutAuditLog';
const TYPED_STRUCTS = {
  'xds.type.v3.TypedStruct': 'xds.type.v3.TypedStruct',
  'udpa.type.v1.TypedStruct': 'udpa.type.v1.TypedStruct',
} as const;

const CONDITIONS: Partial<Record<Condition, RbacAudit['condition']>> = {
  [Condition.ON_DENY]: 'ON_DENY',
  [Condition.ON_ALLOW]: 'ON_ALLOW',
  [Condition.ON_DENY_AND_ALLOW]: 'ON_DENY_AND_ALLOW',
};

/**
 * The options at the current path. Undefined when nothing is ever logged (condition NONE, or no
 * logger kept) — also when invalid, with the errors recorded.
 */
export function validateAuditOptions(
  options: AuditOptionsProto,
  errors: ValidationErrors,
): RbacAudit | undefined {
  const before = errors.count;
  let condition: RbacAudit['condition'] | undefined;
  if (options.auditCondition !== Condition.NONE) {
    condition = CONDITIONS[options.auditCondition];
    if (!condition) errors.addAt('audit_condition', `unknown value ${options.auditCondition}`);
  }
  const loggers: AuditLoggerConfig[] = [];
  errors.field('logger_configs', () =>
    options.loggerConfigs.forEach((config, i) => {
      const logger = errors.index(i, () => validateLoggerConfig(config, errors));
      if (logger) loggers.push(logger);
    }),
  );
  if (errors.count > before || !condition || loggers.length === 0) return undefined;
  return Object.freeze({ condition, loggers: Object.freeze(loggers) });
}

function validateLoggerConfig(
  config: LoggerConfigProto,
  errors: ValidationErrors,
): AuditLoggerConfig | undefined {
  const typed = config.auditLogger?.typedConfig;
  if (!typed) {
    errors.addAt('audit_logger.typed_config', 'field not present');
    return undefined;
  }
  return errors.field('audit_logger', () =>
    errors.field('typed_config', (): AuditLoggerConfig | undefined => {
      const typeName = typeNameOfUrl(typed.type_url);
      if (typeName === STDOUT_TYPE) {
        if (!decodeAnyValue(STDOUT_TYPE, typed, errors)) return undefined;
        return Object.freeze({ name: STDOUT_AUDIT_LOGGER, config: EMPTY_CONFIG });
      }
      const structType = TYPED_STRUCTS[typeName as keyof typeof TYPED_STRUCTS];
      const struct = structType && decodeAnyValue(structType, typed, errors);
      if (structType && !struct) return undefined;
      const name = struct ? typeNameOfUrl(struct.typeUrl) : typeName;
      const factory = struct ? auditLoggerFactory(name) : undefined;
      if (!factory) {
        if (!config.isOptional) errors.add(`unsupported audit logger type ${name}`);
        return undefined;
      }
      const json = struct!.value ? structToJson(struct!.value) : EMPTY_CONFIG;
      try {
        return Object.freeze({ name, config: factory.parseConfig(json) });
      } catch (e) {
        // A59: `is_optional` excuses only an unsupported type, not a bad config.
        errors.addAt('value', `invalid config for audit logger ${name}: ${errorReason(e)}`);
        return undefined;
      }
    }),
  );
}
