// The common case in one call: a cluster name in, priorities of endpoints out. The cluster tree
// feeds the cluster resolver, as A37's CDS policy feeds xds_cluster_resolver.
import type { XdsError } from '../errors';
import type { XdsClient } from '../xds-client';
import { ClusterResolver, type ClusterResolverOptions, type Priority } from './cluster-resolver';
import { watchClusterTree, type ClusterTreeOptions } from './cluster-tree';

export interface ClusterEndpointsListener {
  /** The priorities of the cluster's tree, in order, whenever the tree or an endpoint changes. */
  onUpdate(priorities: readonly Priority[]): void;
  /** The tree failed (A37's TRANSIENT_FAILURE), or every mechanism failed. Code UNAVAILABLE. */
  onError(error: XdsError): void;
}

export type ClusterEndpointsOptions = ClusterTreeOptions & ClusterResolverOptions;

export interface ClusterEndpointsHandle {
  /** Re-resolves the logical DNS clusters of the tree. */
  requestReresolution(): void;
  /** Stops the tree, the resolver and every watch and timer. Idempotent. */
  cancel(): void;
}

/**
 * Watches the cluster `clusterName`, expands its aggregate tree and resolves its leaves. The
 * listener is only ever called asynchronously.
 */
export function watchClusterEndpoints(
  client: XdsClient,
  clusterName: string,
  listener: ClusterEndpointsListener,
  options: ClusterEndpointsOptions = {},
): ClusterEndpointsHandle {
  let resolver: ClusterResolver | undefined;
  let cancelled = false;
  const resolverListener = {
    onUpdate: (priorities: readonly Priority[]) => !cancelled && listener.onUpdate(priorities),
    onError: (error: XdsError) => !cancelled && listener.onError(error),
  };
  const tree = watchClusterTree(
    client,
    clusterName,
    {
      onUpdate: ({ mechanisms }) => {
        if (resolver) resolver.updateMechanisms(mechanisms);
        else resolver = new ClusterResolver(client, mechanisms, resolverListener, options);
      },
      onError: (error) => {
        // The tree has no usable configuration: drop the resolver so that nothing it says
        // contradicts the error; the next good tree starts a new one.
        resolver?.close();
        resolver = undefined;
        listener.onError(error);
      },
    },
    options,
  );
  return {
    requestReresolution: () => resolver?.requestReresolution(),
    cancel: () => {
      if (cancelled) return;
      cancelled = true;
      tree.cancel();
      resolver?.close();
      resolver = undefined;
    },
  };
}
