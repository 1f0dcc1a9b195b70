// gRFC A33: the fault injection filter's config (`HTTPFault`), in a Listener's HTTP filter chain
// or in a `typed_per_filter_config` override (the same message in both places), decoded and
// validated. Pure: the grpc plugin applies it per RPC.
import {
  FractionalPercent_DenominatorType,
  type FaultAbort as FaultAbortProto,
  type FaultDelay as FaultDelayProto,
  type FractionalPercent,
} from '../../generated/protos';
import type { ValidationErrors } from '../../validation-errors';
import { decodeMessage } from '../any';
import { durationMs } from '../common';
import { grpcCodeForHttpStatus, MAX_GRPC_CODE } from './grpc-codes';
import type { FaultAbort, FaultDelay, FaultInjectionConfig, FaultPercentage } from './update';

export const FAULT_FILTER_TYPE = 'envoy.extensions.filters.http.fault.v3.HTTPFault';

const DENOMINATORS: Record<number, FaultPercentage['denominator']> = {
  [FractionalPercent_DenominatorType.HUNDRED]: 100,
  [FractionalPercent_DenominatorType.TEN_THOUSAND]: 10_000,
  [FractionalPercent_DenominatorType.MILLION]: 1_000_000,
};

/** An unset percentage is 0 % (Envoy's default, and C-core's and grpc-go's). */
const NEVER: FaultPercentage = Object.freeze({ numerator: 0, denominator: 100 });

function validatePercentage(
  percentage: FractionalPercent | null,
  errors: ValidationErrors,
): FaultPercentage {
  if (!percentage) return NEVER;
  return errors.field('percentage', () => {
    const denominator = DENOMINATORS[percentage.denominator];
    if (denominator === undefined) {
      errors.addAt('denominator', `unsupported value ${percentage.denominator}`);
      return NEVER;
    }
    return Object.freeze({ numerator: percentage.numerator, denominator });
  });
}

function validateDelay(delay: FaultDelayProto, errors: ValidationErrors): FaultDelay | undefined {
  const percentage = validatePercentage(delay.percentage, errors);
  switch (delay.faultDelaySecifier) {
    case 'fixedDelay': {
      const delayMs = errors.field('fixed_delay', () => durationMs(delay.fixedDelay!, errors));
      return Object.freeze({ type: 'fixed', delayMs, percentage });
    }
    case 'headerDelay':
      return Object.freeze({ type: 'header', percentage });
    default:
      // No delay, as C-core and grpc-go read it: a NACK would also drop every other filter and
      // route of the resource (issue 20).
      return undefined;
  }
}

function validateAbort(abort: FaultAbortProto, errors: ValidationErrors): FaultAbort | undefined {
  const percentage = validatePercentage(abort.percentage, errors);
  switch (abort.errorType) {
    case 'grpcStatus': {
      const code = abort.grpcStatus ?? 0;
      if (code > MAX_GRPC_CODE) {
        errors.addAt('grpc_status', `must be in range [0, ${MAX_GRPC_CODE}]`);
        return undefined;
      }
      return Object.freeze({ type: 'grpc', code, percentage });
    }
    case 'httpStatus': {
      const httpStatus = abort.httpStatus ?? 0;
      // Envoy's own range for the field.
      if (httpStatus < 200 || httpStatus > 599) {
        errors.addAt('http_status', 'must be in range [200, 599]');
        return undefined;
      }
      return Object.freeze({
        type: 'http',
        httpStatus,
        code: grpcCodeForHttpStatus(httpStatus),
        percentage,
      });
    }
    case 'headerAbort':
      return Object.freeze({ type: 'header', percentage });
    default:
      // No abort, as C-core and grpc-go read it (see the delay above).
      return undefined;
  }
}

/**
 * Validates an HTTPFault at the current path. `value` is the serialized message, or undefined
 * when it came as a TypedStruct (a JSON struct), which gRPC C-core and grpc-go refuse too.
 * Undefined, with errors, when unusable. `upstream_cluster`, `headers`, `downstream_nodes`,
 * `response_rate_limit` and the runtime keys are not read (A33 leaves them out).
 */
export function validateFaultConfig(
  value: Uint8Array | undefined,
  errors: ValidationErrors,
): FaultInjectionConfig | undefined {
  if (value === undefined) {
    errors.add(`unsupported value TypedStruct for ${FAULT_FILTER_TYPE}`);
    return undefined;
  }
  const fault = decodeMessage(FAULT_FILTER_TYPE, value, errors);
  if (fault === undefined) return undefined;
  const delay = fault.delay
    ? errors.field('delay', () => validateDelay(fault.delay!, errors))
    : undefined;
  const abort = fault.abort
    ? errors.field('abort', () => validateAbort(fault.abort!, errors))
    : undefined;
  return Object.freeze({
    ...(delay ? { delay } : {}),
    ...(abort ? { abort } : {}),
    ...(fault.maxActiveFaults ? { maxActiveFaults: fault.maxActiveFaults.value } : {}),
  });
}
