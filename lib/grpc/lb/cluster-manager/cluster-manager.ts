// `xds_client.cluster_manager` (gRFC A28, A31): one child per cluster the routes or in-flight
// RPCs use, each a `cds` policy; an RPC goes to the child its ConfigSelector chose, with the
// endpoint's hostname as its :authority when its route says so (A81, common/authority-rewrite.ts)
// and the ID tokens of its gcp_authn filters when the connection is TLS (A83,
// gcp-authn/token-credentials.ts).

import {
  connectivityState,
  experimental,
  type ChannelOptions,
  type LoadBalancingConfig,
} from '@grpc/grpc-js';
import { PICK_AUTHORITY, PICK_CLUSTER, PICK_FAILURE, POLICY } from '../../names';
import { aggregateState } from '../common/aggregate-state';
import { rewriteAuthority, withHostnameOf } from '../common/authority-rewrite';
import { throughHttpProxy } from '../../http-connect';
import { addTokenCredentials } from '../../gcp-authn/token-credentials';
import { dropPick } from '../common/pick-results';
import { attemptOf } from '../../telemetry/xds-call';
import { SmallMap } from '../../../small-map';
import { ChildHandler } from '../common/child-handler';
import { ForwardingHelper } from '../common/forwarding-helper';

type Endpoint = experimental.Endpoint;
type TypedConfig = experimental.TypedLoadBalancingConfig;

/** The children's configs by cluster: a Map, or the SmallMap a parsed config has. */
type ChildConfigs = Pick<ReadonlyMap<string, TypedConfig>, 'has' | 'get'> &
  Iterable<[string, TypedConfig]>;

export class ClusterManagerConfig implements TypedConfig {
  constructor(readonly children: ChildConfigs) {}

  getLoadBalancerName(): string {
    return POLICY.clusterManager;
  }

  toJsonObject(): object {
    const children: Record<string, object> = {};
    for (const [name, config] of this.children) {
      children[name] = { child_policy: [config.toJsonObject()] };
    }
    return { [POLICY.clusterManager]: { children } };
  }

  /** `{ children: { [name]: { child_policy: LoadBalancingConfig[] } } }` */
  static createFromJson(obj: unknown): ClusterManagerConfig {
    const children = (obj as { children?: unknown })?.children;
    if (typeof children !== 'object' || children === null) {
      throw new Error('children must be an object');
    }
    // A SmallMap: grpc-js keeps the config, and most channels' routes name one cluster.
    const parsed = new SmallMap<string, TypedConfig>();
    for (const [name, child] of Object.entries(children)) {
      const list = (child as { child_policy?: unknown })?.child_policy;
      const config = Array.isArray(list)
        ? experimental.selectLbConfigFromList(list as LoadBalancingConfig[])
        : null;
      if (!config) throw new Error(`child ${name}: no usable child_policy`);
      parsed.set(name, config);
    }
    return new ClusterManagerConfig(parsed);
  }
}

/**
 * One cluster's child: its balancer, what it last reported, and the helper its policy talks to
 * (the child itself).
 */
class Child extends ForwardingHelper {
  readonly balancer: experimental.ChildLoadBalancerHandler;
  state = connectivityState.IDLE;
  picker: experimental.Picker;

  constructor(
    parent: experimental.ChannelControlHelper,
    private readonly policy: ClusterManagerLoadBalancer,
    readonly name: string,
  ) {
    super(parent);
    this.picker = new experimental.QueuePicker(policy);
    this.balancer = new ChildHandler(this);
  }

  override updateState(state: connectivityState, picker: experimental.Picker): void {
    this.policy.onChildState(this, state, picker);
  }

  // At the root, above grpc-js's outlier_detection (which knows endpoints by address): A81's
  // mark for endpoints with a hostname, and A86's proxy in place of the endpoint's address.
  override createSubchannel(
    address: experimental.SubchannelAddress,
    args: ChannelOptions,
  ): experimental.SubchannelInterface {
    const target = throughHttpProxy(address, args);
    return withHostnameOf(this.parent.createSubchannel(target.address, target.args), address);
  }
}

export class ClusterManagerLoadBalancer implements experimental.LoadBalancer {
  private readonly children = new Map<string, Child>();
  /** While an update is applied, children's state changes are collected, then reported once. */
  private updating = false;

  constructor(private readonly helper: experimental.ChannelControlHelper) {}

  updateAddressList(
    endpoints: experimental.StatusOr<Endpoint[]>,
    config: TypedConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean {
    if (!(config instanceof ClusterManagerConfig)) return false;
    // grpc-js hands the ConfigSelector down in the options, under a key that subchannel
    // arguments keep: a new selector on every update would mean new subchannels, and new
    // connections, for every endpoint. Nothing below this policy needs it.
    // A copy without it, not `delete` on a copy: an object a property was deleted from is a
    // hash table several times the size, and every policy below keeps these options.
    const { [experimental.CHANNEL_ARGS_CONFIG_SELECTOR_KEY]: _selector, ...childOptions } = options;
    this.updating = true;
    for (const [name, child] of this.children) {
      if (config.children.has(name)) continue;
      child.balancer.destroy();
      this.children.delete(name);
    }
    for (const [name, childConfig] of config.children) {
      let child = this.children.get(name);
      if (!child) {
        child = new Child(this.helper, this, name);
        this.children.set(name, child);
      }
      child.balancer.updateAddressList(endpoints, childConfig, childOptions, resolutionNote);
    }
    this.updating = false;
    this.report();
    return true;
  }

  /** A child's report (its Child is its policy's helper). */
  onChildState(child: Child, state: connectivityState, picker: experimental.Picker): void {
    if (this.children.get(child.name) !== child) return;
    child.state = state;
    child.picker = picker;
    if (!this.updating) this.report();
  }

  private report(): void {
    // A SmallMap: one lookup per RPC either way, and mostly one cluster.
    const pickers = new SmallMap<string, experimental.Picker>();
    for (const [name, child] of this.children) pickers.set(name, child.picker);
    const state = aggregateState([...this.children.values()].map((c) => c.state));
    this.helper.updateState(state, new ClusterManagerPicker(pickers), null);
  }

  /**
   * grpc-js calls this whenever the channel looks up a call's config (once per RPC): only
   * children not yet READY have anything to do.
   */
  exitIdle(): void {
    for (const child of this.children.values()) {
      if (child.state !== connectivityState.READY) child.balancer.exitIdle();
    }
  }

  resetBackoff(): void {
    for (const child of this.children.values()) child.balancer.resetBackoff();
  }

  destroy(): void {
    for (const child of this.children.values()) child.balancer.destroy();
    this.children.clear();
  }

  getTypeName(): string {
    return POLICY.clusterManager;
  }
}

/** Sends each RPC to the child its ConfigSelector chose. */
class ClusterManagerPicker implements experimental.Picker {
  constructor(private readonly pickers: SmallMap<string, experimental.Picker>) {}

  pick(args: experimental.PickArgs): experimental.PickResult {
    // A66's attempt starts before its pick, and follows the stream the pick leads to.
    const attempt = attemptOf(args);
    const result = this.route(args);
    return attempt ? attempt.picked(result, args.metadata) : result;
  }

  private route(args: experimental.PickArgs): experimental.PickResult {
    const failure = args.extraPickInfo[PICK_FAILURE];
    if (failure !== undefined) return dropPick(failure);
    const cluster = args.extraPickInfo[PICK_CLUSTER] ?? '';
    const picker = this.pickers.get(cluster);
    // Cannot happen while the selector holds its clusters (A31); fail rather than hang.
    if (!picker) return dropPick(`cluster "${cluster}" is not in the channel's configuration`);
    const picked = rewriteAuthority(picker.pick(args), args.extraPickInfo[PICK_AUTHORITY]);
    return addTokenCredentials(picked, args.extraPickInfo);
  }
}
