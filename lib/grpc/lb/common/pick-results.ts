// Pick results and pickers the plugin's policies share.

import { Metadata, experimental, status, type StatusObject } from '@grpc/grpc-js';

type PickResult = experimental.PickResult;

function statusOf(code: status, details: string): StatusObject {
  return { code, details, metadata: new Metadata() };
}

/** Fails the RPC at once, wait-for-ready or not (a route that cannot forward it, a drop). */
export function dropPick(details: string): PickResult {
  return {
    pickResultType: experimental.PickResultType.DROP,
    subchannel: null,
    status: statusOf(status.UNAVAILABLE, details),
    onCallStarted: null,
    onCallEnded: null,
  };
}

/** A picker for a policy in TRANSIENT_FAILURE: UNAVAILABLE with `details`. */
export function failingPicker(details: string): experimental.Picker {
  return new experimental.UnavailablePicker({ code: status.UNAVAILABLE, details });
}
