// The EDS discovery mechanism of gRFC A37: one endpoints watch through the client.
import { status } from '@grpc/grpc-js';
import { isXdsError, XdsError } from '../errors';
import type { ResourceWatcher, WatchHandle } from '../client/cache/resource-watcher';
import type { EndpointUpdate } from '../resources/endpoint/update';
import type { XdsClient } from '../xds-client';
import type { DiscoveryMechanism } from './cluster-tree';
import type { Discovery, DiscoveryResult } from './discovery';

/**
 * The EDS discovery mechanism: one endpoints watch, its update filtered by health. It is its
 * watch's watcher: methods, not closures, for the one object a channel keeps per leaf cluster.
 */
export class EdsDiscovery implements Discovery, ResourceWatcher<EndpointUpdate> {
  result: DiscoveryResult = { kind: 'pending' };
  private readonly name: string;
  private readonly handle: WatchHandle;
  private closed = false;

  constructor(
    client: XdsClient,
    private readonly mechanism: DiscoveryMechanism,
    private readonly onResult: () => void,
  ) {
    this.name = mechanism.edsServiceName ?? mechanism.cluster;
    this.handle = this.watch(client, this.name);
  }

  onResourceChanged(update: EndpointUpdate): void {
    if (this.closed) return;
    this.result = healthyPriorities(update);
    this.onResult();
  }

  onResourceError(error: XdsError): void {
    if (this.closed) return;
    // Connectivity never empties a priority that has endpoints (A57); anything else
    // (does not exist, deleted, invalid with nothing kept) does.
    if (error.code === status.UNAVAILABLE && this.result.kind === 'ok') return;
    const failed = this.wrap(error);
    // The same error again (a replay) changes nothing downstream.
    const before = this.result;
    if (before.kind === 'error' && before.error.message === failed.message) return;
    this.result = { kind: 'error', error: failed };
    this.onResult();
  }

  /** A NACKed update or a broken stream: keep the endpoints we have. */
  onAmbientError(): void {}

  /** EDS has nothing to resolve again: the server pushes. */
  resolveNow(): void {}

  close(): void {
    this.closed = true;
    this.handle.cancel();
  }

  /**
   * A name the client refuses (a control plane's 20 KB service_name) is this mechanism's
   * error, never an exception in the caller's microtask.
   */
  private watch(client: XdsClient, name: string): WatchHandle {
    try {
      return client.watchEndpoints(name, this);
    } catch (e) {
      const error = isXdsError(e) ? e : new XdsError(status.INTERNAL, String(e), { cause: e });
      queueMicrotask(() => this.onResourceError(error));
      return { cancel: () => {} };
    }
  }

  private wrap(error: XdsError): XdsError {
    const { name } = this;
    return new XdsError(
      error.code,
      `cluster "${this.mechanism.cluster}": EDS resource "${name}": ${error.reason}`,
      {
        cause: error,
        resourceName: name,
        ...(error.typeUrl ? { typeUrl: error.typeUrl } : {}),
        ...(error.nodeId === undefined ? {} : { nodeId: error.nodeId }),
      },
    );
  }
}

/**
 * Only endpoints whose health status is UNKNOWN or HEALTHY take traffic (gRFC A27; what C-core,
 * grpc-go and grpc-js do); DRAINING ones are kept too, with their status, for stateful session
 * affinity (A55: they still serve the sessions they have, and take no new traffic). A locality
 * left with none stays, empty, so that names stay put.
 */
function healthyPriorities(update: EndpointUpdate): DiscoveryResult {
  const priorities = update.priorities.map((localities) =>
    Object.freeze(
      localities.map((locality) => {
        const healthy = locality.endpoints.filter(
          (e) =>
            e.healthStatus === 'UNKNOWN' ||
            e.healthStatus === 'HEALTHY' ||
            e.healthStatus === 'DRAINING',
        );
        if (healthy.length === locality.endpoints.length) return locality;
        return Object.freeze({ ...locality, endpoints: Object.freeze(healthy) });
      }),
    ),
  );
  return { kind: 'ok', priorities: Object.freeze(priorities), drops: update.dropOverloads };
}
