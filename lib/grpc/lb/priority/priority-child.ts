// A child of the priority policy: a ChildBalancer plus the failover timer of gRFC A56 ("Child
// Connectivity State Tracking"). While the timer runs, the priority waits for this child to
// finish connecting before it looks at lower priorities.

import { connectivityState, experimental } from '@grpc/grpc-js';
import { ChildBalancer, type ChildEvents } from '../common/child-balancer';

export class PriorityChild extends ChildBalancer {
  /** From the child's latest config (A37): a logical DNS child re-resolves, EDS ones do not. */
  ignoreReresolutionRequests = false;
  private failoverTimer: NodeJS.Timeout | null = null;
  /** Whether it reported READY or IDLE more recently than TRANSIENT_FAILURE. */
  private readyOrIdleSinceFailure = false;

  constructor(
    name: string,
    parent: experimental.ChannelControlHelper,
    private readonly policy: ChildEvents<PriorityChild> & { readonly failoverTimeoutMs: number },
  ) {
    super(name, parent, policy as ChildEvents<ChildBalancer>);
    // A56: the timer starts when the child is created.
    this.startFailoverTimer();
  }

  get failoverTimerPending(): boolean {
    return this.failoverTimer !== null;
  }

  protected override recordState(
    state: connectivityState,
    picker: experimental.Picker,
    errorMessage: string | null,
  ): void {
    switch (state) {
      case connectivityState.READY:
      case connectivityState.IDLE:
        this.readyOrIdleSinceFailure = true;
        this.stopFailoverTimer();
        break;
      case connectivityState.TRANSIENT_FAILURE:
        this.readyOrIdleSinceFailure = false;
        this.stopFailoverTimer();
        break;
      case connectivityState.CONNECTING:
        // Only a real transition of a child that was working: a child that keeps failing and
        // retrying must not hold the priority back for another timeout each time.
        if (this.state !== connectivityState.CONNECTING && this.readyOrIdleSinceFailure) {
          this.startFailoverTimer();
        }
        break;
    }
    super.recordState(state, picker, errorMessage);
  }

  override deactivate(retentionMs: number): void {
    // A deactivated child is not a candidate the priority waits for.
    this.stopFailoverTimer();
    super.deactivate(retentionMs);
  }

  override destroy(): void {
    this.stopFailoverTimer();
    super.destroy();
  }

  private startFailoverTimer(): void {
    this.stopFailoverTimer();
    this.failoverTimer = setTimeout(() => {
      this.failoverTimer = null;
      // The child now counts as failed: the priority chooses again.
      this.events.onChildChange(this);
    }, this.policy.failoverTimeoutMs);
    // A channel being closed, or a process exiting, never waits for failover.
    this.failoverTimer.unref();
  }

  private stopFailoverTimer(): void {
    if (this.failoverTimer) clearTimeout(this.failoverTimer);
    this.failoverTimer = null;
  }
}
