// The EDS discovery mechanism of gRFC A37: one endpoints watch through the client.
import { status } from '@grpc/grpc-js';
import { XdsError } from '../errors';
import type { WatchHandle } from '../client/resource-watcher';
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
        `cluster "${mechanism.cluster}": EDS resource "${name}": ${error.message}`,
        { cause: error, resourceName: name, ...(error.typeUrl ? { typeUrl: error.typeUrl } : {}) },
      );
    this.handle = client.watchEndpoints(name, {
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
}

/**
 * Only endpoints whose health status is UNKNOWN or HEALTHY take traffic (gRFC A27; what C-core,
 * grpc-go and grpc-js do). A locality left with none stays, empty, so that names stay put.
 */
function healthyPriorities(update: EndpointUpdate): DiscoveryResult {
  const priorities = update.priorities.map((localities) =>
    Object.freeze(
      localities.map((locality) => {
        const healthy = locality.endpoints.filter(
          (e) => e.healthStatus === 'UNKNOWN' || e.healthStatus === 'HEALTHY',
        );
        if (healthy.length === locality.endpoints.length) return locality;
        return Object.freeze({ ...locality, endpoints: Object.freeze(healthy) });
      }),
    ),
  );
  return { kind: 'ok', priorities: Object.freeze(priorities), drops: update.dropOverloads };
}
