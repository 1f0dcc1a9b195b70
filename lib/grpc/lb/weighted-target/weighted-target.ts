// The `xds_client.weighted_target` LB policy (gRFC A28, A56): locality weights. Each target is
// a child policy with a weight; an RPC goes to a READY target chosen at random in proportion to
// the weights, and the target's own picker chooses the endpoint.
//
// A target dropped from the config is deactivated, not destroyed: it is kept, unused, for 15
// minutes (as A28's implementations do) so that a locality that leaves and comes back in a few
// EDS updates keeps its connections. When that retention runs out the target's balancer is
// destroyed and its subchannels released; the timer is unref'd and cleared on destroy.

import {
  connectivityState,
  experimental,
  status,
  type ChannelOptions,
  type LoadBalancingConfig,
} from '@grpc/grpc-js';
import { POLICY } from '../../names';
import {
  ChildBalancer,
  isJsonObject,
  msOption,
  selectChildConfig,
  type ChildEvents,
} from '../common/child-balancer';
import { groupByFirstPathElement } from '../common/hierarchy';

type Endpoint = experimental.Endpoint;
type Picker = experimental.Picker;
type StatusOr<T> = experimental.StatusOr<T>;
type TypedLoadBalancingConfig = experimental.TypedLoadBalancingConfig;

/**
 * Channel option: how long a target dropped from the config is kept before it is destroyed, in
 * milliseconds (default 15 min). The prefix keeps it out of subchannel keys. For tests.
 */
export const WEIGHTED_TARGET_RETENTION_OPTION =
  'grpc.internal.no_subchannel.xds_client.weighted_target_retention_ms';
export const DEFAULT_WEIGHTED_TARGET_RETENTION_MS = 15 * 60_000;

export const NO_TARGETS_MESSAGE = 'weighted_target has no targets';

const MAX_WEIGHT = 0xffff_ffff;

export interface WeightedTarget {
  readonly name: string;
  /** A positive integer (a uint32, as locality weights are). */
  readonly weight: number;
  readonly config: TypedLoadBalancingConfig;
}

function checkWeight(weight: unknown, field: string): number {
  if (
    typeof weight !== 'number' ||
    !Number.isInteger(weight) ||
    weight < 1 ||
    weight > MAX_WEIGHT
  ) {
    throw new Error(`${field}: must be an integer from 1 to ${MAX_WEIGHT} (got ${String(weight)})`);
  }
  return weight;
}

export class WeightedTargetConfig implements TypedLoadBalancingConfig {
  readonly targets: readonly WeightedTarget[];

  constructor(targets: readonly WeightedTarget[]) {
    const seen = new Set<string>();
    for (const target of targets) {
      if (seen.has(target.name)) {
        throw new Error(`target "${target.name}" listed twice`);
      }
      seen.add(target.name);
      checkWeight(target.weight, `weighted_target: targets["${target.name}"].weight`);
    }
    // Copies, not frozen: V8 gives each frozen copy a hidden class of its own.
    this.targets = targets.map(({ name, weight, config }) => ({ name, weight, config }));
  }

  getLoadBalancerName(): string {
    return POLICY.weightedTarget;
  }

  toJsonObject(): object {
    const targets: Record<string, object> = {};
    for (const target of this.targets) {
      targets[target.name] = {
        weight: target.weight,
        child_policy: [target.config.toJsonObject()],
      };
    }
    return { [POLICY.weightedTarget]: { targets } };
  }

  /**
   * The JSON form `{ targets: { [name]: { weight: number, child_policy: LoadBalancingConfig[] }
   * } }`. Throws on anything else.
   */
  static createFromJson(obj: unknown): WeightedTargetConfig {
    if (!isJsonObject(obj)) throw new Error('config must be an object');
    const { targets } = obj;
    if (!isJsonObject(targets)) throw new Error('targets must be an object');
    return new WeightedTargetConfig(
      Object.entries(targets).map(([name, target]): WeightedTarget => {
        const field = `targets["${name}"]`;
        if (!isJsonObject(target)) throw new Error(`${field} must be an object`);
        return {
          name,
          weight: checkWeight(target.weight, `${field}.weight`),
          config: selectChildConfig(
            target.child_policy as LoadBalancingConfig[],
            `${field}.child_policy`,
          ),
        };
      }),
    );
  }
}

/** Picks a READY target at random by weight; the target's pick result is returned untouched. */
class WeightedPicker implements Picker {
  private readonly cumulative: number[];
  private readonly pickers: Picker[];
  private readonly total: number;

  constructor(targets: readonly { weight: number; picker: Picker }[]) {
    // Made by map, not push: an array grown by push keeps room for 17 elements.
    let total = 0;
    this.cumulative = targets.map(({ weight }) => (total += weight));
    this.pickers = targets.map(({ picker }) => picker);
    this.total = total;
  }

  pick(args: experimental.PickArgs): experimental.PickResult {
    const point = Math.random() * this.total;
    // The first target whose cumulative weight exceeds the point.
    let low = 0;
    let high = this.cumulative.length - 1;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.cumulative[mid]! > point) high = mid;
      else low = mid + 1;
    }
    return this.pickers[low]!.pick(args);
  }
}

export class WeightedTargetLoadBalancer
  implements experimental.LoadBalancer, ChildEvents<ChildBalancer>
{
  private readonly targets = new Map<string, ChildBalancer>();
  private config: WeightedTargetConfig | null = null;
  private updatesPaused = false;
  private destroyed = false;

  constructor(private readonly helper: experimental.ChannelControlHelper) {}

  // What the targets report (ChildEvents): methods, not an object of closures per policy.

  onChildChange(child: ChildBalancer): void {
    // A deactivated target's news changes nothing the channel sees.
    if (!this.updatesPaused && !this.destroyed && !child.deactivated) this.report();
  }

  onChildReresolution(child: ChildBalancer): void {
    if (!child.deactivated) this.helper.requestReresolution();
  }

  onChildExpired(child: ChildBalancer): void {
    if (this.targets.get(child.name) === child) this.targets.delete(child.name);
  }

  updateAddressList(
    endpoints: StatusOr<Endpoint[]>,
    lbConfig: TypedLoadBalancingConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean {
    if (!(lbConfig instanceof WeightedTargetConfig) || this.destroyed) return false;
    this.config = lbConfig;
    const groups = endpoints.ok ? groupByFirstPathElement(endpoints.value) : new Map();
    const retentionMs = msOption(
      options,
      WEIGHTED_TARGET_RETENTION_OPTION,
      DEFAULT_WEIGHTED_TARGET_RETENTION_MS,
    );
    const wanted = new Set(lbConfig.targets.map((t) => t.name));
    // Children report while they are updated; the aggregate is computed once, at the end.
    this.updatesPaused = true;
    try {
      for (const [name, child] of this.targets) {
        if (!wanted.has(name)) child.deactivate(retentionMs);
      }
      for (const target of lbConfig.targets) {
        let child = this.targets.get(target.name);
        if (child) child.reactivate();
        else
          this.targets.set(
            target.name,
            (child = new ChildBalancer(target.name, this.helper, this)),
          );
        child.update(
          endpoints.ok ? experimental.statusOrFromValue(groups.get(target.name) ?? []) : endpoints,
          target.config,
          options,
          resolutionNote,
        );
      }
    } finally {
      this.updatesPaused = false;
    }
    this.report();
    return true;
  }

  exitIdle(): void {
    for (const child of this.activeTargets()) child.exitIdle();
  }

  resetBackoff(): void {
    for (const child of this.targets.values()) child.resetBackoff();
  }

  destroy(): void {
    this.destroyed = true;
    for (const child of this.targets.values()) child.destroy();
    this.targets.clear();
  }

  getTypeName(): string {
    return POLICY.weightedTarget;
  }

  /** The config's targets, in config order. */
  private activeTargets(): ChildBalancer[] {
    const active: ChildBalancer[] = [];
    for (const target of this.config?.targets ?? []) {
      const child = this.targets.get(target.name);
      if (child) active.push(child);
    }
    return active;
  }

  /**
   * The aggregate state: READY if any target is READY (only those are picked), else CONNECTING
   * if any is, else IDLE if any is (a pick wakes them), else TRANSIENT_FAILURE with the first
   * target's error.
   */
  private report(): void {
    if (this.destroyed) return;
    const targets = this.config?.targets ?? [];
    const ready: { weight: number; picker: Picker }[] = [];
    let connecting = false;
    let idle = false;
    let firstFailed: ChildBalancer | null = null;
    for (const target of targets) {
      const child = this.targets.get(target.name);
      if (!child) continue;
      switch (child.state) {
        case connectivityState.READY:
          ready.push({ weight: target.weight, picker: child.picker });
          break;
        case connectivityState.CONNECTING:
          connecting = true;
          break;
        case connectivityState.IDLE:
          idle = true;
          break;
        default:
          firstFailed ??= child;
      }
    }
    if (ready.length > 0) {
      this.helper.updateState(connectivityState.READY, new WeightedPicker(ready), null);
    } else if (connecting) {
      this.helper.updateState(
        connectivityState.CONNECTING,
        new experimental.QueuePicker(this),
        null,
      );
    } else if (idle) {
      this.helper.updateState(connectivityState.IDLE, new experimental.QueuePicker(this), null);
    } else if (firstFailed) {
      this.helper.updateState(
        connectivityState.TRANSIENT_FAILURE,
        firstFailed.picker,
        firstFailed.errorMessage,
      );
    } else {
      this.helper.updateState(
        connectivityState.TRANSIENT_FAILURE,
        new experimental.UnavailablePicker({
          code: status.UNAVAILABLE,
          details: NO_TARGETS_MESSAGE,
        }),
        NO_TARGETS_MESSAGE,
      );
    }
  }
}

/** Registers `xds_client.weighted_target` in grpc-js (idempotent: the registry is a map). */
export function registerWeightedTargetPolicy(): void {
  experimental.registerLoadBalancerType(
    POLICY.weightedTarget,
    WeightedTargetLoadBalancer,
    WeightedTargetConfig,
  );
}
