// The EDS discovery mechanism of gRFC A37: one endpoints watch through the client.
import { status } from '@grpc/grpc-js';
import { isXdsError, XdsError } from '../errors';
import type { WatchHandle } from '../client/cache/resource-watcher';
import type { EndpointUpdate } from '../resources/endpoint/update';
import type { XdsClient } from '../xds-client';
import type { DiscoveryMechanism } from './cluster-tree';
import type { DiscoveryResult } from './discovery';

/** The EDS discovery mechanism: one endpoints watch, its update filtered by health. */
export class EdsDiscovery {
  result: DiscoveryResult = { kind: 'pending' };
  private readonly handle: WatchHandle;
  private closed = false;

  constructor(client: XdsClient, mechanism: DiscoveryMechanism, onResult: () => void) {
    const name = mechanism.edsServiceName ?? mechanism.cluster;
    const wrap = (error: XdsError) =>
      new XdsError(
        error.code,
        `cluster "${mechanism.cluster}": EDS resource "${name}": ${error.reason}`,
        {
          cause: error,
          resourceName: name,
          ...(error.typeUrl ? { typeUrl: error.typeUrl } : {}),
          ...(error.nodeId === undefined ? {} : { nodeId: error.nodeId }),
        },
      );
    this.handle = this.watch(client, name, {
      onResourceChanged: (update) => {
        if (this.closed) return;
        this.result = healthyPriorities(update);
        onResult();
      },
      onResourceError: (error) => {
        if (this.closed) return;
        // Connectivity never empties a priority that has endpoints (A57); anything else
        // (does not exist, deleted, invalid with nothing kept) does.
        if (error.code === status.UNAVAILABLE && this.result.kind === 'ok') return;
        const failed = wrap(error);
        // The same error again (a replay) changes nothing downstream.
        const before = this.result;
        if (before.kind === 'error' && before.error.message === failed.message) return;
        this.result = { kind: 'error', error: failed };
        onResult();
      },
      // A NACKed update or a broken stream: keep the endpoints we have.
      onAmbientError: () => {},
    });
  }

  close(): void {
    this.closed = true;
    this.handle.cancel();
  }

  /**
   * A name the client refuses (a control plane's 20 KB service_name) is this mechanism's
   * error, never an exception in the caller's microtask.
   */
  private watch(
    client: XdsClient,
    name: string,
    watcher: Parameters<XdsClient['watchEndpoints']>[1],
  ): WatchHandle {
    try {
      return client.watchEndpoints(name, watcher);
    } catch (e) {
      const error = isXdsError(e) ? e : new XdsError(status.INTERNAL, String(e), { cause: e });
      queueMicrotask(() => watcher.onResourceError(error));
      return { cancel: () => {} };
    }
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
