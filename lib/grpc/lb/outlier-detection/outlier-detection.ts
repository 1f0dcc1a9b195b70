// Outlier detection (gRFC A50) with grpc-js's own `outlier_detection` policy, over a leaf
// cluster's cluster_impl: where gRFC A75 moved it (A50 had it per priority; with cluster_impl
// above the priorities, as here, C-core and grpc-js-xds put it above cluster_impl, so it judges
// the cluster's endpoints across priorities).
//
// grpc-js builds a policy's children from JSON only, and JSON cannot carry our cluster_impl
// config (nor every grpc-js config: weighted_round_robin's does not convert back). So the child
// named in the outlier_detection config is `xds_client.outlier_detection_child`, which takes the
// real config from an attribute that outlier_detection passes down with the rest of the options.
//
// grpc-js registers `outlier_detection` unless GRPC_EXPERIMENTAL_ENABLE_OUTLIER_DETECTION is set
// to anything but "true"; without it, clusters' outlier_detection is ignored (A50's switch).

import { connectivityState, experimental, type ChannelOptions } from '@grpc/grpc-js';
import { durationOfMs } from '../../../duration';
import type { OutlierDetection } from '../../../resources/cluster';
import { OUTLIER_DETECTION_CHILD_ATTRIBUTE, POLICY } from '../../names';
import { failingPicker } from '../common/pick-results';
import { SingleChildLoadBalancer } from '../common/single-child';

type TypedConfig = experimental.TypedLoadBalancingConfig;

/** grpc-js's name for it. */
export const OUTLIER_DETECTION_POLICY = 'outlier_detection';

/** Whether grpc-js has outlier_detection (see the environment variable above). */
export function outlierDetectionAvailable(): boolean {
  return experimental.isLoadBalancerNameRegistered(OUTLIER_DETECTION_POLICY);
}

/** Milliseconds as the Duration objects grpc-js's policy configs take. */
export function msToDuration(ms: number): experimental.Duration {
  return durationOfMs(ms);
}

/** A50's mapping of the validated Cluster field to the policy's config (child left out). */
export function outlierDetectionJson(
  od: OutlierDetection,
): Omit<experimental.OutlierDetectionRawConfig, 'child_policy'> {
  const { successRateEjection: sr, failurePercentageEjection: fp } = od;
  return {
    interval: msToDuration(od.intervalMs),
    base_ejection_time: msToDuration(od.baseEjectionTimeMs),
    max_ejection_time: msToDuration(od.maxEjectionTimeMs),
    max_ejection_percent: od.maxEjectionPercent,
    ...(sr
      ? {
          success_rate_ejection: {
            stdev_factor: sr.stdevFactor,
            enforcement_percentage: sr.enforcementPercentage,
            minimum_hosts: sr.minimumHosts,
            request_volume: sr.requestVolume,
          },
        }
      : {}),
    ...(fp
      ? {
          failure_percentage_ejection: {
            threshold: fp.threshold,
            enforcement_percentage: fp.enforcementPercentage,
            minimum_hosts: fp.minimumHosts,
            request_volume: fp.requestVolume,
          },
        }
      : {}),
  };
}

/**
 * `child` under outlier detection: the config to use instead, and the attributes to add to the
 * options it is given with. Throws if grpc-js rejects the config.
 */
export function withOutlierDetection(
  child: TypedConfig,
  od: OutlierDetection,
): { readonly config: TypedConfig; readonly attributes: Readonly<Record<string, unknown>> } {
  const config = experimental.parseLoadBalancingConfig({
    [OUTLIER_DETECTION_POLICY]: {
      ...outlierDetectionJson(od),
      child_policy: [{ [POLICY.outlierDetectionChild]: {} }],
    },
  });
  return { config, attributes: { [OUTLIER_DETECTION_CHILD_ATTRIBUTE]: child } };
}

export class OutlierDetectionChildConfig implements TypedConfig {
  getLoadBalancerName(): string {
    return POLICY.outlierDetectionChild;
  }

  toJsonObject(): object {
    return { [POLICY.outlierDetectionChild]: {} };
  }

  static createFromJson(): OutlierDetectionChildConfig {
    return new OutlierDetectionChildConfig();
  }
}

/** Runs the config found in the options' attribute, with the options minus that attribute. */
export class OutlierDetectionChildLoadBalancer extends SingleChildLoadBalancer {
  constructor(private readonly helper: experimental.ChannelControlHelper) {
    super(helper);
  }

  updateAddressList(
    endpoints: experimental.StatusOr<experimental.Endpoint[]>,
    config: TypedConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean {
    if (!(config instanceof OutlierDetectionChildConfig)) return false;
    const { [OUTLIER_DETECTION_CHILD_ATTRIBUTE]: childConfig, ...rest } = options;
    if (!isTypedConfig(childConfig)) {
      const details = `${POLICY.outlierDetectionChild}: no child config in the options`;
      this.helper.updateState(connectivityState.TRANSIENT_FAILURE, failingPicker(details), details);
      return true;
    }
    return this.child.updateAddressList(endpoints, childConfig, rest, resolutionNote);
  }

  getTypeName(): string {
    return POLICY.outlierDetectionChild;
  }
}

function isTypedConfig(value: unknown): value is TypedConfig {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as TypedConfig).getLoadBalancerName === 'function' &&
    typeof (value as TypedConfig).toJsonObject === 'function'
  );
}
