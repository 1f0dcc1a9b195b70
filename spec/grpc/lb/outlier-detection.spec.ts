// A Cluster's validated outlier_detection as grpc-js's outlier_detection config (gRFC A50's
// field mapping), and the child handed down beside it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { experimental } from '@grpc/grpc-js';
import { register } from '../../../lib/grpc';
import { OUTLIER_DETECTION_CHILD_ATTRIBUTE, POLICY } from '../../../lib/grpc/names';
import {
  outlierDetectionJson,
  withOutlierDetection,
} from '../../../lib/grpc/lb/outlier-detection/outlier-detection';
import type { OutlierDetection } from '../../../lib/resources/cluster';

const OD: OutlierDetection = {
  intervalMs: 1500.5,
  baseEjectionTimeMs: 30_000,
  maxEjectionTimeMs: 300_000,
  maxEjectionPercent: 20,
  successRateEjection: {
    stdevFactor: 1900,
    enforcementPercentage: 90,
    minimumHosts: 5,
    requestVolume: 100,
  },
  failurePercentageEjection: {
    threshold: 85,
    enforcementPercentage: 50,
    minimumHosts: 3,
    requestVolume: 40,
  },
};

describe('outlier detection config', () => {
  it('maps every field as A50 says, durations as grpc-js Durations', () => {
    assert.deepStrictEqual(outlierDetectionJson(OD), {
      interval: { seconds: 1, nanos: 500_500_000 },
      base_ejection_time: { seconds: 30, nanos: 0 },
      max_ejection_time: { seconds: 300, nanos: 0 },
      max_ejection_percent: 20,
      success_rate_ejection: {
        stdev_factor: 1900,
        enforcement_percentage: 90,
        minimum_hosts: 5,
        request_volume: 100,
      },
      failure_percentage_ejection: {
        threshold: 85,
        enforcement_percentage: 50,
        minimum_hosts: 3,
        request_volume: 40,
      },
    });
  });

  it('leaves out a disabled ejection kind', () => {
    const json = outlierDetectionJson({
      ...OD,
      successRateEjection: undefined,
      failurePercentageEjection: undefined,
    });
    assert.ok(!('success_rate_ejection' in json));
    assert.ok(!('failure_percentage_ejection' in json));
  });

  it('is accepted by grpc-js, with our child policy and the child config as an attribute', () => {
    register();
    const child = experimental.parseLoadBalancingConfig({ round_robin: {} });
    const { config, attributes } = withOutlierDetection(child, OD);
    assert.equal(config.getLoadBalancerName(), 'outlier_detection');
    const json = config.toJsonObject() as { outlier_detection: Record<string, unknown> };
    assert.deepStrictEqual(json.outlier_detection['child_policy'], [
      { [POLICY.outlierDetectionChild]: {} },
    ]);
    assert.equal(json.outlier_detection['max_ejection_percent'], 20);
    assert.strictEqual(attributes[OUTLIER_DETECTION_CHILD_ATTRIBUTE], child);
  });
});
