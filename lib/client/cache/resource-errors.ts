// The NOT_FOUND errors the client itself decides on, worded in one place.
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

/** The server let a resource's TTL run out: it is gone, as if the server had removed it. */
export function ttlExpiredError(state: ResourceState<unknown>, nodeId: string): XdsError {
  return new XdsError(
    status.NOT_FOUND,
    `${state.type.typeName} "${state.name}" does not exist: its TTL ran out without an ` +
      'update or heartbeat from the xDS server',
    { typeUrl: state.type.typeUrl, resourceName: state.name, nodeId },
  );
}
