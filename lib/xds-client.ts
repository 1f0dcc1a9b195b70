import { XdsClientCore } from './client/core/client-core';
import type { ResourceWatcher, WatchHandle } from './client/cache/resource-watcher';
import { clusterResourceType, type ClusterUpdate } from './resources/cluster';
import { endpointResourceType, type EndpointUpdate } from './resources/endpoint';
import { listenerResourceType, type ListenerUpdate } from './resources/listener';
import { routeConfigResourceType, type RouteConfigUpdate } from './resources/route-config';

/**
 * The xDS client: the generic core plus typed watches of the four gRPC xDS resource types.
 *
 * ```ts
 * const client = new XdsClient({ bootstrap });
 * const watch = client.watchCluster('A', { onResourceChanged, onResourceError, onAmbientError });
 * watch.cancel();
 * client.close();
 * ```
 */
export class XdsClient extends XdsClientCore {
  watchListener(name: string, watcher: ResourceWatcher<ListenerUpdate>): WatchHandle {
    return this.watch(listenerResourceType, name, watcher);
  }

  watchRouteConfiguration(name: string, watcher: ResourceWatcher<RouteConfigUpdate>): WatchHandle {
    return this.watch(routeConfigResourceType, name, watcher);
  }

  watchCluster(name: string, watcher: ResourceWatcher<ClusterUpdate>): WatchHandle {
    return this.watch(clusterResourceType, name, watcher);
  }

  /** Watches the ClusterLoadAssignment named `name` (a cluster's EDS service name). */
  watchEndpoints(name: string, watcher: ResourceWatcher<EndpointUpdate>): WatchHandle {
    return this.watch(endpointResourceType, name, watcher);
  }
}
