// `outlier_detection` (gRFC A50): durations must be valid and non-negative, percentages at most
// 100. The defaults filled in are A50's (Envoy's) so consumers never see "unset".
import type {
  Duration,
  OutlierDetection as OutlierDetectionProto,
  UInt32Value,
} from '../../generated/protos';
import { durationMs } from '../common';
import type { ValidationErrors } from '../../validation-errors';
import type { FailurePercentageEjection, OutlierDetection, SuccessRateEjection } from './update';

export function outlierDetection(
  od: OutlierDetectionProto,
  errors: ValidationErrors,
): OutlierDetection | undefined {
  const before = errors.count;
  const duration = (name: string, value: Duration | null, fallback: number): number =>
    value === null ? fallback : errors.field(name, () => durationMs(value, errors));
  const percent = (name: string, value: UInt32Value | null, fallback: number): number => {
    if (value === null) return fallback;
    if (value.value > 100) errors.addAt(name, 'must be in range [0, 100]');
    return value.value;
  };
  const count = (value: UInt32Value | null, fallback: number): number =>
    value === null ? fallback : value.value;

  const intervalMs = duration('interval', od.interval, 10_000);
  const baseEjectionTimeMs = duration('base_ejection_time', od.baseEjectionTime, 30_000);
  const maxEjectionTimeMs = duration('max_ejection_time', od.maxEjectionTime, 300_000);
  const maxEjectionPercent = percent('max_ejection_percent', od.maxEjectionPercent, 10);
  // Checked even when their ejection kind ends up disabled: a bad value is a bad resource.
  const enforcingSuccessRate = percent('enforcing_success_rate', od.enforcingSuccessRate, 100);
  const threshold = percent('failure_percentage_threshold', od.failurePercentageThreshold, 85);
  const enforcingFailure = percent(
    'enforcing_failure_percentage',
    od.enforcingFailurePercentage,
    0,
  );

  // A50: enforcing_success_rate defaults to 100 (on); explicitly 0 turns success-rate ejection
  // off. enforcing_failure_percentage defaults to 0 (off).
  let successRateEjection: SuccessRateEjection | undefined;
  if (enforcingSuccessRate !== 0) {
    successRateEjection = Object.freeze({
      stdevFactor: count(od.successRateStdevFactor, 1900),
      enforcementPercentage: enforcingSuccessRate,
      minimumHosts: count(od.successRateMinimumHosts, 5),
      requestVolume: count(od.successRateRequestVolume, 100),
    });
  }
  let failurePercentageEjection: FailurePercentageEjection | undefined;
  if (enforcingFailure !== 0) {
    failurePercentageEjection = Object.freeze({
      threshold,
      enforcementPercentage: enforcingFailure,
      minimumHosts: count(od.failurePercentageMinimumHosts, 5),
      requestVolume: count(od.failurePercentageRequestVolume, 50),
    });
  }
  if (errors.count !== before) return undefined;
  return Object.freeze({
    intervalMs,
    baseEjectionTimeMs,
    maxEjectionTimeMs,
    maxEjectionPercent,
    successRateEjection,
    failurePercentageEjection,
  });
}
