// The `xds_client.least_request` LB policy (gRFC A48; grpc-js has none): each RPC goes to the
// endpoint with the fewest RPCs outstanding among `choiceCount` endpoints drawn at random, with
// replacement, from the READY ones. Connectivity is round_robin's: every endpoint is kept
// connected (one pick_first leaf per endpoint, gRFC A61), and the policy is READY when one is,
// CONNECTING while one is connecting or idle, TRANSIENT_FAILURE when all have failed (a leaf
// stays failed until it connects again).
//
// Counts are this policy instance's own and live as long as their endpoint stays in the list. A
// call is counted when it is picked (call-slots.ts), so RPCs started in one tick spread out
// instead of all seeing the same counts.

import { connectivityState, experimental, type ChannelOptions } from '@grpc/grpc-js';
import { POLICY } from '../../names';
import { countPickedCall, InFlight } from '../common/call-slots';
import { failingPicker } from '../common/pick-results';
import { ForwardingHelper } from '../common/forwarding-helper';

type Endpoint = experimental.Endpoint;
type Picker = experimental.Picker;
type TypedConfig = experimental.TypedLoadBalancingConfig;

export const DEFAULT_CHOICE_COUNT = 2;
/** A48: larger values are clamped to this. */
export const MAX_CHOICE_COUNT = 10;

export class LeastRequestConfig implements TypedConfig {
  /** In [2, 10]. */
  readonly choiceCount: number;

  constructor(choiceCount: number = DEFAULT_CHOICE_COUNT) {
    if (!Number.isInteger(choiceCount) || choiceCount < 2) {
      throw new Error('choiceCount must be an integer of at least 2');
    }
    this.choiceCount = Math.min(choiceCount, MAX_CHOICE_COUNT);
  }

  getLoadBalancerName(): string {
    return POLICY.leastRequest;
  }

  toJsonObject(): object {
    return { [POLICY.leastRequest]: { choiceCount: this.choiceCount } };
  }

  /** The JSON form of A48's config: `{ choiceCount?: number }` (default 2, clamped to 10). */
  static createFromJson(obj: unknown): LeastRequestConfig {
    const choiceCount = (obj as { choiceCount?: unknown } | null | undefined)?.choiceCount;
    if (choiceCount === undefined) return new LeastRequestConfig();
    if (typeof choiceCount !== 'number') {
      throw new Error('choiceCount must be a number');
    }
    return new LeastRequestConfig(choiceCount);
  }
}

interface Child {
  readonly leaf: experimental.LeafLoadBalancer;
  readonly inFlight: InFlight;
}

/** What the policy's leaves report to. */
class LeastRequestChildHelper extends ForwardingHelper {
  constructor(
    parent: experimental.ChannelControlHelper,
    private readonly policy: LeastRequestLoadBalancer,
  ) {
    super(parent);
  }

  override updateState(_state: unknown, _picker: unknown, errorMessage: string | null): void {
    this.policy.onChildState(errorMessage);
  }
}

export class LeastRequestLoadBalancer implements experimental.LoadBalancer {
  /** By endpoint (its addresses): an endpoint listed twice gets one leaf (A48). */
  private children = new Map<string, Child>();
  private choiceCount = DEFAULT_CHOICE_COUNT;
  private updatesPaused = false;
  private lastError: string | null = null;
  private readonly childHelper: experimental.ChannelControlHelper;

  constructor(private readonly helper: experimental.ChannelControlHelper) {
    this.childHelper = new LeastRequestChildHelper(helper, this);
  }

  /** A leaf's report (through LeastRequestChildHelper). */
  onChildState(errorMessage: string | null): void {
    if (errorMessage) this.lastError = errorMessage;
    this.report();
  }

  updateAddressList(
    endpoints: experimental.StatusOr<Endpoint[]>,
    config: TypedConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean {
    if (!(config instanceof LeastRequestConfig)) return false;
    this.choiceCount = config.choiceCount;
    if (!endpoints.ok) {
      // Keep serving with the endpoints we have; with none, fail with the resolver's error.
      if (this.children.size === 0) {
        const details = endpoints.error.details;
        this.helper.updateState(
          connectivityState.TRANSIENT_FAILURE,
          failingPicker(details),
          details,
        );
      } else {
        this.report();
      }
      return true;
    }
    const next = new Map<string, Child>();
    this.updatesPaused = true;
    try {
      for (const endpoint of endpoints.value) {
        const key = experimental.endpointToString(endpoint);
        if (next.has(key)) continue;
        const existing = this.children.get(key);
        if (existing) {
          this.children.delete(key);
          existing.leaf.updateEndpoint(endpoint, options);
          next.set(key, existing);
        } else {
          const leaf = new experimental.LeafLoadBalancer(
            endpoint,
            this.childHelper,
            options,
            resolutionNote,
          );
          next.set(key, { leaf, inFlight: new InFlight() });
          leaf.startConnecting();
        }
      }
      for (const gone of this.children.values()) gone.leaf.destroy();
      this.children = next;
    } finally {
      this.updatesPaused = false;
    }
    if (next.size === 0) {
      const details = `${POLICY.leastRequest}: no addresses. Resolution note: ${resolutionNote}`;
      this.helper.updateState(connectivityState.TRANSIENT_FAILURE, failingPicker(details), details);
      return true;
    }
    this.report();
    return true;
  }

  private report(): void {
    if (this.updatesPaused) return;
    const ready: ReadyEndpoint[] = [];
    let connecting = false;
    for (const child of this.children.values()) {
      const state = child.leaf.getConnectivityState();
      if (state === connectivityState.READY) {
        ready.push({ picker: child.leaf.getPicker(), inFlight: child.inFlight });
      } else if (state === connectivityState.CONNECTING || state === connectivityState.IDLE) {
        connecting = true;
      }
    }
    if (ready.length > 0) {
      this.helper.updateState(
        connectivityState.READY,
        new LeastRequestPicker(ready, this.choiceCount),
        null,
      );
    } else if (connecting) {
      this.helper.updateState(
        connectivityState.CONNECTING,
        new experimental.QueuePicker(this),
        null,
      );
    } else {
      const details = `${POLICY.leastRequest}: no connection established. Last error: ${this.lastError}`;
      this.helper.updateState(connectivityState.TRANSIENT_FAILURE, failingPicker(details), details);
    }
    // Every endpoint stays connected, as with round_robin.
    for (const child of this.children.values()) {
      if (child.leaf.getConnectivityState() === connectivityState.IDLE) child.leaf.exitIdle();
    }
  }

  exitIdle(): void {
    for (const child of this.children.values()) child.leaf.exitIdle();
  }

  resetBackoff(): void {
    // The leaves' subchannels have their own backoff; grpc-js's leaves offer no reset.
  }

  destroy(): void {
    for (const child of this.children.values()) child.leaf.destroy();
    this.children.clear();
  }

  getTypeName(): string {
    return POLICY.leastRequest;
  }
}

interface ReadyEndpoint {
  readonly picker: Picker;
  readonly inFlight: InFlight;
}

/** A48's picker: the least loaded of `choiceCount` random draws. */
class LeastRequestPicker implements Picker {
  constructor(
    private readonly ready: readonly ReadyEndpoint[],
    private readonly choiceCount: number,
  ) {}

  pick(args: experimental.PickArgs): experimental.PickResult {
    const ready = this.ready;
    const n = ready.length;
    let best = ready[(Math.random() * n) | 0]!;
    if (n > 1) {
      for (let i = 1; i < this.choiceCount; i++) {
        const sampled = ready[(Math.random() * n) | 0]!;
        if (sampled.inFlight.active < best.inFlight.active) best = sampled;
      }
    }
    const result = best.picker.pick(args);
    if (result.pickResultType !== experimental.PickResultType.COMPLETE) return result;
    return countPickedCall(result, best.inFlight);
  }
}
