import { experimental } from '@grpc/grpc-js';
import { csdsService } from '../csds';
import { CdsConfig, CdsLoadBalancer } from './lb/cds/cds';
import { ClusterImplConfig, ClusterImplLoadBalancer } from './lb/cluster-impl/cluster-impl';
import {
  ClusterManagerConfig,
  ClusterManagerLoadBalancer,
} from './lb/cluster-manager/cluster-manager';
import { LeastRequestConfig, LeastRequestLoadBalancer } from './lb/least-request/least-request';
import {
  OutlierDetectionChildConfig,
  OutlierDetectionChildLoadBalancer,
} from './lb/outlier-detection/outlier-detection';
import { registerPickFirstWeightedPolicy } from './lb/pick-first-weighted/pick-first-weighted';
import { registerOverrideHostPolicy } from './lb/override-host/override-host';
import { registerPriorityPolicy } from './lb/priority/priority';
import { registerRingHashPolicy } from './lb/ring-hash/ring-hash';
import { registerWeightedTargetPolicy } from './lb/weighted-target/weighted-target';
import type { TelemetryOptions } from './telemetry/options';
import { configureTelemetry } from './telemetry/telemetry';
import { POLICY } from './names';
import { XdsResolver } from './resolver';

let registered = false;

/**
 * Registers the `xds` resolver scheme and the plugin's LB policies with the application's
 * grpc-js (a peer dependency: the copy the application itself imports), and CSDS (gRFC A40)
 * among grpc-js's admin services, so `grpc.addAdminServicesToServer(server)` serves it, as with
 * grpc-js-xds. Idempotent.
 *
 * `options` switch on per-call telemetry (gRFCs A66, A72, A89, A94; docs/operations.md) for the
 * `xds:` channels and XdsServers made afterwards; they are checked at once (a wrong field
 * throws, named). A later call with options replaces them; one without leaves them.
 */
export function register(options?: TelemetryOptions): void {
  if (options !== undefined) configureTelemetry(options);
  if (registered) return;
  registered = true;
  experimental.registerLoadBalancerType(
    POLICY.clusterManager,
    ClusterManagerLoadBalancer,
    ClusterManagerConfig,
  );
  experimental.registerLoadBalancerType(POLICY.cds, CdsLoadBalancer, CdsConfig);
  experimental.registerLoadBalancerType(
    POLICY.clusterImpl,
    ClusterImplLoadBalancer,
    ClusterImplConfig,
  );
  registerOverrideHostPolicy();
  registerPriorityPolicy();
  registerWeightedTargetPolicy();
  registerRingHashPolicy();
  registerPickFirstWeightedPolicy();
  experimental.registerLoadBalancerType(
    POLICY.leastRequest,
    LeastRequestLoadBalancer,
    LeastRequestConfig,
  );
  experimental.registerLoadBalancerType(
    POLICY.outlierDetectionChild,
    OutlierDetectionChildLoadBalancer,
    OutlierDetectionChildConfig,
  );
  experimental.registerResolver('xds', XdsResolver);
  // The service loads when a server adds the admin services, not with the plugin.
  experimental.registerAdminService(
    () => csdsService().CSDS_SERVICE_DEFINITION,
    () => csdsService().csdsHandlers(),
  );
}
