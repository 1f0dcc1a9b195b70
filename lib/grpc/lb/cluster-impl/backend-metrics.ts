// Backend metrics for load reports (gRFC A64, A85): a backend's ORCA per-call report arrives in
// the `endpoint-load-metrics-bin` trailer (a serialized xds.data.orca.v3.OrcaLoadReport, as
// gRFC A51 has servers send it). cluster_impl reads it when a call ends and hands the locality's
// load what the cluster's lrs_report_endpoint_metrics selects. Out-of-band reports never count
// (A64: per-call only). grpc-js parses the same trailer for its own policies, but keeps that
// reader out of its public API, so the trailer is decoded here with our own descriptor.

import type { Metadata, experimental } from '@grpc/grpc-js';
import type { BackendMetrics, LocalityLoad } from '../../../client/lrs/load-store';
import { messageCodec } from '../../../codec';
import type { OrcaLoadReport } from '../../../generated/protos';
import type { BackendMetricPropagation } from '../../../resources/cluster';
import { logError } from '../../../trace';

/** The trailer gRPC servers send per-call ORCA reports in (gRFC A51). */
export const ORCA_TRAILER = 'endpoint-load-metrics-bin';

const orcaCodec = messageCodec('xds.data.orca.v3.OrcaLoadReport');

/**
 * `result` with an onCallEnded that records the call's backend metrics, as `propagation`
 * selects them, on `locality` (and then runs the pick's own hook).
 */
export function withBackendMetrics(
  result: experimental.PickResult,
  locality: LocalityLoad,
  propagation: BackendMetricPropagation,
): experimental.PickResult {
  const { onCallEnded } = result;
  return {
    ...result,
    onCallEnded: (code, details, trailers) => {
      const report = orcaReport(trailers);
      if (report) locality.recordBackendMetrics(selectBackendMetrics(report, propagation));
      onCallEnded?.(code, details, trailers);
    },
  };
}

/**
 * What of `report` goes into load reports. proto3 doubles have no presence, so a report counts
 * for each selected utilization (an unset one as 0), and for each selected named metric it has.
 */
export function selectBackendMetrics(
  report: OrcaLoadReport,
  propagation: BackendMetricPropagation,
): BackendMetrics {
  const named: [string, number][] = [];
  const all = propagation.allNamedMetrics;
  const wanted = propagation.namedMetrics;
  for (const [key, value] of Object.entries(report.namedMetrics)) {
    if (all || wanted.includes(key)) named.push([`named_metrics.${key}`, value]);
  }
  return {
    ...(propagation.cpuUtilization ? { cpuUtilization: report.cpuUtilization } : {}),
    ...(propagation.memUtilization ? { memUtilization: report.memUtilization } : {}),
    ...(propagation.applicationUtilization
      ? { applicationUtilization: report.applicationUtilization }
      : {}),
    named,
  };
}

/** The call's ORCA report, if its backend sent one that decodes. */
function orcaReport(trailers: Metadata | undefined): OrcaLoadReport | undefined {
  const value = trailers?.get(ORCA_TRAILER)[0];
  if (!Buffer.isBuffer(value)) return undefined;
  try {
    return orcaCodec.decode(value);
  } catch (e) {
    logError(`xds-client: an undecodable ${ORCA_TRAILER} trailer was ignored: ${e}`);
    return undefined;
  }
}
