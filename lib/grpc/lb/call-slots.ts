// Counting RPCs in flight from the pick on. A policy that chooses by load (least_request, A48)
// must count a call when it picks it: grpc-js reports the call started (`onCallStarted`) only a
// microtask or more later, and every pick made before that would see the same counts. But
// grpc-js may also abandon a pick and call neither hook (the RPC was cancelled while its call
// credentials were pending, the subchannel left READY and the call is picked again, a parent
// policy dropped the pick). A count taken at the pick and not claimed by `onCallStarted` by the
// end of the tick is therefore given back; a claim that comes later (slow asynchronous call
// credentials) counts the call again.

import { experimental } from '@grpc/grpc-js';

type PickResult = experimental.PickResult;

/** Calls in flight on one endpoint. */
export interface InFlight {
  active: number;
}

interface Slot {
  readonly counter: InFlight;
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
    slot.counter.active--;
  }
  unclaimed.clear();
}

/**
 * Counts the picked call on `counter` now, and returns `result` with hooks that keep the count
 * right: released when the call ends, or at the end of the tick if it never starts. The pick's
 * own hooks still run.
 */
export function countPickedCall(result: PickResult, counter: InFlight): PickResult {
  const slot: Slot = { counter, claimed: false, released: false };
  counter.active++;
  unclaimed.add(slot);
  if (!sweepQueued) {
    sweepQueued = true;
    setImmediate(sweep).unref();
  }
  const { onCallStarted, onCallEnded } = result;
  return {
    ...result,
    onCallStarted: () => {
      if (!slot.claimed) {
        slot.claimed = true;
        unclaimed.delete(slot);
        if (slot.released) {
          slot.released = false;
          counter.active++;
        }
      }
      onCallStarted?.();
    },
    onCallEnded: (code, details, metadata) => {
      if (slot.claimed && !slot.released) {
        slot.released = true;
        counter.active--;
      }
      onCallEnded?.(code, details, metadata);
    },
  };
}
