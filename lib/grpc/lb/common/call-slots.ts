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

interface Slot {
  readonly count: CallCount;
  claimed: boolean;
  /** The count is not held (swept before the claim, or the call ended). */
  released: boolean;
}

const unclaimed = new Set<Slot>();
let sweepQueued = false;

function sweep(): void {
  sweepQueued = false;
  for (const slot of unclaimed) {
    slot.released = true;
    slot.count.release();
  }
  unclaimed.clear();
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
  const slot: Slot = { count, claimed: false, released: false };
  unclaimed.add(slot);
  if (!sweepQueued) {
    sweepQueued = true;
    setImmediate(sweep).unref();
  }
  const { onCallStarted, onCallEnded } = result;
  let started = false;
  return {
    ...result,
    subchannel,
    onCallStarted: () => {
      if (!slot.claimed) {
        slot.claimed = true;
        unclaimed.delete(slot);
        // Swept before it started (slow call credentials): count it again, limit or not.
        if (slot.released) {
          slot.released = false;
          count.acquire();
        }
      }
      if (observer && !started) {
        started = true;
        observer.callStarted();
      }
      onCallStarted?.();
    },
    onCallEnded: (code, details, metadata) => {
      if (slot.claimed && !slot.released) {
        slot.released = true;
        count.release();
      }
      if (started) {
        started = false;
        observer!.callFinished(code === status.OK);
      }
      onCallEnded?.(code, details, metadata);
    },
  };
}
