// Cluster lrs_report_endpoint_metrics (gRFC A85): which ORCA fields load reports carry. Every
// string is accepted; those that name no ORCA field gRPC knows are ignored.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { edsCluster, validCluster } from './fixtures/cluster-fixtures';

const propagationOf = (names: string[]) =>
  validCluster(edsCluster({ lrsReportEndpointMetrics: names })).backendMetricPropagation;

describe('Cluster lrs_report_endpoint_metrics (A85)', () => {
  it('unset or selecting nothing known: no backend metrics are propagated', () => {
    assert.equal(validCluster(edsCluster()).backendMetricPropagation, undefined);
    assert.equal(propagationOf(['disk_utilization', 'named_metrics.', 'named_metrics']), undefined);
  });

  it('the three utilizations by name, and named metrics key by key, sorted', () => {
    assert.deepEqual(
      propagationOf([
        'cpu_utilization',
        'application_utilization',
        'named_metrics.zeta',
        'named_metrics.alpha',
        'named_metrics.zeta',
        'qps',
      ]),
      {
        cpuUtilization: true,
        memUtilization: false,
        applicationUtilization: true,
        allNamedMetrics: false,
        namedMetrics: ['alpha', 'zeta'],
      },
    );
  });

  it('named_metrics.* selects every named metric, and the key list is then moot', () => {
    assert.deepEqual(propagationOf(['named_metrics.foo', 'named_metrics.*', 'mem_utilization']), {
      cpuUtilization: false,
      memUtilization: true,
      applicationUtilization: false,
      allNamedMetrics: true,
      namedMetrics: [],
    });
  });
});
