// `xds_client.cds` (gRFC A37, A74, A75): the policy of one cluster. It reads the cluster from
// the channel's XdsConfig: an aggregate becomes a priority of `cds` children, one per leaf; a
// leaf becomes cluster_impl over its priorities (leaf-config.ts).

import { connectivityState, experimental, status, type ChannelOptions } from '@grpc/grpc-js';
import { XdsError } from '../../../errors';
import { POLICY, XDS_CONFIG_ATTRIBUTE } from '../../names';
import type { XdsConfig } from '../../xds-config';
import { leafConfig } from './leaf-config';
import { failingPicker } from '../common/pick-results';
import { SingleChildLoadBalancer } from '../common/single-child';
import { PriorityConfig } from '../priority/priority';

type TypedConfig = experimental.TypedLoadBalancingConfig;

export class CdsConfig implements TypedConfig {
  constructor(readonly cluster: string) {}

  getLoadBalancerName(): string {
    return POLICY.cds;
  }

  toJsonObject(): object {
    return { [POLICY.cds]: { cluster: this.cluster } };
  }

  static createFromJson(obj: unknown): CdsConfig {
    const cluster = (obj as { cluster?: unknown })?.cluster;
    if (typeof cluster !== 'string' || cluster === '') {
      throw new Error('cluster must be a non-empty string');
    }
    return new CdsConfig(cluster);
  }
}

export class CdsLoadBalancer extends SingleChildLoadBalancer {
  constructor(private readonly helper: experimental.ChannelControlHelper) {
    super(helper);
  }

  updateAddressList(
    _endpoints: experimental.StatusOr<experimental.Endpoint[]>,
    config: TypedConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean {
    if (!(config instanceof CdsConfig)) return false;
    const xds = options[XDS_CONFIG_ATTRIBUTE] as XdsConfig | undefined;
    const result = xds?.clusters.get(config.cluster);
    if (!xds || !result) {
      const reason = `cluster "${config.cluster}" is not in the channel's xDS configuration`;
      const nodeId = xds?.nodeId;
      this.fail(new XdsError(status.UNAVAILABLE, reason, nodeId === undefined ? {} : { nodeId }));
      return true;
    }
    if (!result.ok) {
      this.fail(result.error);
      return true;
    }
    const cluster = result.value;
    if (cluster.type === 'aggregate') {
      const children = cluster.leafClusters.map((leaf) => ({
        name: leaf,
        config: new CdsConfig(leaf),
        // A leaf's own priorities decide what its children may ask for.
        ignoreReresolutionRequests: false,
      }));
      const ok = experimental.statusOrFromValue([]);
      return this.child.updateAddressList(
        ok,
        new PriorityConfig(children),
        options,
        resolutionNote,
      );
    }
    const sessions = xds.listener.httpConnectionManager.httpFilters.some(
      (filter) => filter.statefulSession !== undefined,
    );
    const leaf = leafConfig(cluster, sessions);
    if ('error' in leaf) {
      this.fail(new XdsError(status.UNAVAILABLE, leaf.error, { nodeId: xds.nodeId }));
      return true;
    }
    const endpoints = experimental.statusOrFromValue([...leaf.endpoints]);
    const childOptions = leaf.attributes ? { ...options, ...leaf.attributes } : options;
    return this.child.updateAddressList(endpoints, leaf.config, childOptions, resolutionNote);
  }

  /** RPCs to this cluster fail with UNAVAILABLE and the error; its connections are dropped. */
  private fail(error: XdsError): void {
    const message = error.message;
    this.child.destroy();
    this.helper.updateState(connectivityState.TRANSIENT_FAILURE, failingPicker(message), message);
  }

  getTypeName(): string {
    return POLICY.cds;
  }
}
