import { connectivityState } from '@grpc/grpc-js';

/**
 * The state of a policy whose children all serve: READY if any child is, else CONNECTING, else
 * IDLE, else TRANSIENT_FAILURE (also with no children at all).
 */
export function aggregateState(states: readonly connectivityState[]): connectivityState {
  for (const candidate of [
    connectivityState.READY,
    connectivityState.CONNECTING,
    connectivityState.IDLE,
  ]) {
    if (states.includes(candidate)) return candidate;
  }
  return connectivityState.TRANSIENT_FAILURE;
}
