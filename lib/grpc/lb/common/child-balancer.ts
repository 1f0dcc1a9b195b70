// One child of a multi-child LB policy (priority, weighted_target): its balancer, the last state
// it reported, and the retention timer that runs while it is deactivated. Both policies keep a
// child they stopped using for a while (gRFC A56 "Child Lifetime", A28) so that a flapping
// priority or locality does not rebuild its connections; the timer is what makes "a while" end
// with the child really destroyed, and it never holds the process open.

import { connectivityState, experimental, type ChannelOptions } from '@grpc/grpc-js';
import { ChildHandler } from './child-handler';
import { ForwardingHelper } from './forwarding-helper';

type ChannelControlHelper = experimental.ChannelControlHelper;
type Endpoint = experimental.Endpoint;
type LoadBalancer = experimental.LoadBalancer;
type Picker = experimental.Picker;
type TypedLoadBalancingConfig = experimental.TypedLoadBalancingConfig;

/** What a child tells the policy that owns it. */
export interface ChildEvents<C extends ChildBalancer> {
  /** The child's state, picker or timers changed (already recorded on the child). */
  onChildChange(child: C): void;
  onChildReresolution(child: C): void;
  /** The retention timer ran out and the child is destroyed: forget it. */
  onChildExpired(child: C): void;
}

export class ChildBalancer {
  /** A new child has reported nothing yet: it counts as connecting. */
  state: connectivityState = connectivityState.CONNECTING;
  picker: Picker;
  errorMessage: string | null = null;
  protected readonly handler: experimental.ChildLoadBalancerHandler;
  private retentionTimer: NodeJS.Timeout | null = null;
  protected destroyed = false;

  constructor(
    readonly name: string,
    parent: ChannelControlHelper,
    protected readonly events: ChildEvents<ChildBalancer>,
  ) {
    // The handler swaps the child's policy gracefully when its name changes in an update.
    this.handler = new ChildHandler(new ChildBalancerHelper(parent, this));
    this.picker = new experimental.QueuePicker(this.handler as LoadBalancer);
  }

  update(
    endpoints: experimental.StatusOr<Endpoint[]>,
    config: TypedLoadBalancingConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean {
    return this.handler.updateAddressList(endpoints, config, options, resolutionNote);
  }

  /** The child policy reported (through ChildBalancerHelper). */
  onChildState(state: connectivityState, picker: Picker, errorMessage: string | null): void {
    if (this.destroyed) return;
    this.recordState(state, picker, errorMessage);
    this.events.onChildChange(this);
  }

  /** The child policy asked for re-resolution (through ChildBalancerHelper). */
  onChildReresolution(): void {
    if (!this.destroyed) this.events.onChildReresolution(this);
  }

  /** Subclasses watch transitions here (the state before is still in `this.state`). */
  protected recordState(state: connectivityState, picker: Picker, errorMessage: string | null) {
    this.state = state;
    this.picker = picker;
    this.errorMessage = errorMessage;
  }

  get deactivated(): boolean {
    return this.retentionTimer !== null;
  }

  /** Starts the retention timer (once: deactivating a deactivated child keeps its deadline). */
  deactivate(retentionMs: number): void {
    if (this.destroyed || this.retentionTimer) return;
    this.retentionTimer = setTimeout(() => {
      this.retentionTimer = null;
      this.destroy();
      this.events.onChildExpired(this);
    }, retentionMs);
    this.retentionTimer.unref();
  }

  reactivate(): void {
    if (this.retentionTimer) clearTimeout(this.retentionTimer);
    this.retentionTimer = null;
  }

  exitIdle(): void {
    this.handler.exitIdle();
  }

  resetBackoff(): void {
    this.handler.resetBackoff();
  }

  /** Destroys the balancer (its subchannels are unref'd) and stops every timer. */
  destroy(): void {
    this.destroyed = true;
    this.reactivate();
    this.handler.destroy();
  }
}

/** What a child's policy reports to: its ChildBalancer, and the parent's helper for the rest. */
class ChildBalancerHelper extends ForwardingHelper {
  constructor(
    parent: ChannelControlHelper,
    private readonly child: ChildBalancer,
  ) {
    super(parent);
  }

  override updateState(state: connectivityState, picker: Picker, errorMessage: string | null) {
    this.child.onChildState(state, picker, errorMessage);
  }

  override requestReresolution(): void {
    this.child.onChildReresolution();
  }
}

/** A non-negative number of milliseconds from a channel option, else `fallback`. */
export function msOption(options: ChannelOptions, key: string, fallback: number): number {
  const value: unknown = options[key];
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** A plain JSON object (not null, not an array), for config parsers. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The first config of `list` that a registered policy accepts, as grpc-js chooses it; when none
 * does, an Error whose message says why each was refused.
 */
export function selectChildConfig(list: unknown, field: string): TypedLoadBalancingConfig {
  if (!Array.isArray(list)) throw new Error(`${field}: expected an array of LB configs`);
  const chosen = experimental.selectLbConfigFromList(list);
  if (chosen) return chosen;
  const reasons = list.map((entry) => {
    try {
      experimental.parseLoadBalancingConfig(entry);
      return 'accepted';
    } catch (e) {
      return (e as Error).message;
    }
  });
  throw new Error(
    `${field}: no usable LB policy${reasons.length ? ` (${reasons.join('; ')})` : ' (empty list)'}`,
  );
}
