// Counting RPCs in flight from the pick on, for least_request (A48) and cluster_impl's circuit
// breaking (A32). A policy that chooses or limits by load must count a call when it picks it: grpc-js reports the call started (`onCallStarted`) only a
// microtask or more later, and every pick made before that would see the same counts. But
// grpc-js may also abandon a pick and call neither hook (the RPC was cancelled while its call
// credentials were pending, the subchannel left READY and the call is picked again, a parent
// policy dropped the pick). A count taken at the pick and not claimed by `onCallStarted` by the
// end of the tick is therefore given back; a claim that comes later (slow asynchronous call
// credentials) counts the call again.

import { experimental, status } from '@grpc/grpc-js';

type PickResult = experimental.PickResult;

/** What a picked call is counted on. */
export interface CallCount {
  acquire(): void;
  release(): void;
}

/** Calls in flight on one endpoint (least_request compares `active`). */
export class InFlight implements CallCount {
  active = 0;
  acquire(): void {
    this.active++;
  }
  release(): void {
    this.active--;
  }
}

/** Told when the counted call really starts and how it ends (load reports). */
export interface CallObserver {
  callStarted(): void;
  callFinished(ok: boolean): void;
}

/**
 * A counted call's pick result, and what its hooks need (one object a call; the hooks are
 * closures because grpc-js calls `onCallEnded` on its own call object, and policies above may
 * copy the result). Waits in `unclaimed` until the end of the tick.
 */
class CountedPick implements PickResult {
  readonly pickResultType: PickResult['pickResultType'];
  readonly status: PickResult['status'];
  readonly onCallStarted: () => void;
  readonly onCallEnded: NonNullable<PickResult['onCallEnded']>;
  claimed = false;
  /** The count is not held (swept before the claim, or the call ended). */
  released = false;
  /** The observer heard of the start, and not yet of the end. */
  private started = false;

  constructor(
    result: PickResult,
    readonly subchannel: PickResult['subchannel'],
    readonly count: CallCount,
    private readonly observer: CallObserver | undefined,
  ) {
    this.pickResultType = result.pickResultType;
    this.status = result.status;
    const { onCallStarted, onCallEnded } = result;
    this.onCallStarted = onCallStarted
      ? () => {
          this.claim();
          onCallStarted();
        }
      : () => this.claim();
    this.onCallEnded = onCallEnded
      ? (code, details, metadata) => {
          this.end(code);
          onCallEnded(code, details, metadata);
        }
      : (code) => this.end(code);
  }

  private claim(): void {
    if (!this.claimed) {
      this.claimed = true;
      // Swept before it started (slow call credentials): count it again, limit or not.
      if (this.released) {
        this.released = false;
        this.count.acquire();
      }
    }
    if (this.observer && !this.started) {
      this.started = true;
      this.observer.callStarted();
    }
  }

  private end(code: status): void {
    if (this.claimed && !this.released) {
      this.released = true;
      this.count.release();
    }
    if (this.started) {
      this.started = false;
      this.observer!.callFinished(code === status.OK);
    }
  }
}

/** This tick's counted picks (an array: a claim only sets a flag, the sweep skips it). */
const unclaimed: CountedPick[] = [];
let sweepQueued = false;

function sweep(): void {
  sweepQueued = false;
  for (const pick of unclaimed) {
    if (pick.claimed || pick.released) continue;
    pick.released = true;
    pick.count.release();
  }
  unclaimed.length = 0;
}

/** Counts the picked call on `count` now; see holdCountedCall. */
export function countPickedCall(result: PickResult, count: CallCount): PickResult {
  count.acquire();
  return holdCountedCall(result, count);
}

/**
 * `result` for a call its picker has just counted on `count` (cluster_impl counts with a
 * limit), with hooks that keep the count right: released when the call ends, or at the end of
 * the tick if it never starts. The pick's own hooks still run; `subchannel` replaces the
 * result's (a wrapper's inner one), and `observer` hears of the call's start and end.
 */
export function holdCountedCall(
  result: PickResult,
  count: CallCount,
  subchannel = result.subchannel,
  observer?: CallObserver,
): PickResult {
  const pick = new CountedPick(result, subchannel, count, observer);
  unclaimed.push(pick);
  if (!sweepQueued) {
    sweepQueued = true;
    setImmediate(sweep).unref();
  }
  return pick;
}
