// `lrs_report_endpoint_metrics` (gRFC A85): which fields of the backends' ORCA per-call reports
// the client adds to its load reports. Strings that name no ORCA field gRPC knows are ignored,
// for forward compatibility, so nothing in this field is ever an error.
import type { BackendMetricPropagation } from './update';

const NAMED_METRICS_PREFIX = 'named_metrics.';

/** The selection the strings make; undefined when they select nothing. */
export function backendMetricPropagation(
  names: readonly string[],
): BackendMetricPropagation | undefined {
  let cpuUtilization = false;
  let memUtilization = false;
  let applicationUtilization = false;
  let allNamedMetrics = false;
  const namedMetrics = new Set<string>();
  for (const name of names) {
    if (name === 'cpu_utilization') cpuUtilization = true;
    else if (name === 'mem_utilization') memUtilization = true;
    else if (name === 'application_utilization') applicationUtilization = true;
    else if (name === `${NAMED_METRICS_PREFIX}*`) allNamedMetrics = true;
    else if (name.startsWith(NAMED_METRICS_PREFIX) && name.length > NAMED_METRICS_PREFIX.length) {
      namedMetrics.add(name.slice(NAMED_METRICS_PREFIX.length));
    }
  }
  const any = cpuUtilization || memUtilization || applicationUtilization || allNamedMetrics;
  if (!any && namedMetrics.size === 0) return undefined;
  return Object.freeze({
    cpuUtilization,
    memUtilization,
    applicationUtilization,
    allNamedMetrics,
    // With every named metric selected, the list is moot.
    namedMetrics: Object.freeze(allNamedMetrics ? [] : [...namedMetrics].sort()),
  });
}
