// The errors the client itself decides on about a resource, worded in one place.
import { status } from '@grpc/grpc-js';
import { XdsError } from '../../errors';
import type { ResourceState } from './resource-state';

/** gRFC A57: the does-not-exist timer fired. */
export function notReceivedError(
  state: ResourceState<unknown>,
  timeoutMs: number,
  nodeId: string,
): XdsError {
  return new XdsError(
    status.NOT_FOUND,
    `${state.type.typeName} "${state.name}" does not exist: not received within ${timeoutMs} ms`,
    { typeUrl: state.type.typeUrl, resourceName: state.name, nodeId },
  );
}

/**
 * gRFC A88: the timer fired on a server with `resource_timer_is_transient_error`. The server
 * would have said if the resource did not exist, so it is slow: UNAVAILABLE, as a connectivity
 * problem is.
 */
export function timedOutError(
  state: ResourceState<unknown>,
  timeoutMs: number,
  serverUri: string,
  nodeId: string,
): XdsError {
  return new XdsError(
    status.UNAVAILABLE,
    `${state.type.typeName} "${state.name}" not received from xDS server ${serverUri} within ` +
      `${timeoutMs} ms (resource_timer_is_transient_error: the server is slow, the resource ` +
      'may exist)',
    { typeUrl: state.type.typeUrl, resourceName: state.name, nodeId },
  );
}

/** The server let a resource's TTL run out: it is gone, as if the server had removed it. */
export function ttlExpiredError(state: ResourceState<unknown>, nodeId: string): XdsError {
  return new XdsError(
    status.NOT_FOUND,
    `${state.type.typeName} "${state.name}" does not exist: its TTL ran out without an ` +
      'update or heartbeat from the xDS server',
    { typeUrl: state.type.typeUrl, resourceName: state.name, nodeId },
  );
}
