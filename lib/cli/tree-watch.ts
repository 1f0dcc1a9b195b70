// The cluster tree and the cluster resolver joined (gRFC A37), reported as one snapshot: the
// clusters of the tree, its discovery mechanisms and the priorities they resolve to.
import type { XdsError } from '../errors';
import { ClusterResolver, type Priority } from '../clusters/cluster-resolver';
import { watchClusterTree, type ClusterTreeUpdate } from '../clusters/cluster-tree';
import type { DnsResolver } from '../clusters/logical-dns';
import type { XdsClient } from '../xds-client';
import type { TreeSnapshot } from './render';

export interface TreeWatchListener {
  /** The tree is whole and its priorities are resolved; something changed. */
  onUpdate(snapshot: TreeSnapshot): void;
  /** The tree failed (A37: the channel would be in TRANSIENT_FAILURE). */
  onError(error: XdsError): void;
  /** Every discovery mechanism failed; the priorities (all empty) were reported just before. */
  onNoEndpoints?(error: XdsError): void;
}

export interface TreeWatchOptions {
  dnsResolver?: DnsResolver;
}

export function watchTree(
  client: XdsClient,
  root: string,
  listener: TreeWatchListener,
  options: TreeWatchOptions = {},
): { cancel(): void } {
  let tree: ClusterTreeUpdate | undefined;
  let resolver: ClusterResolver | undefined;
  let resolved: readonly unknown[] | undefined;
  let priorities: readonly Priority[] | undefined;
  let cancelled = false;

  const report = () => {
    if (!cancelled && tree && priorities) {
      listener.onUpdate({ clusters: tree.clusters, mechanisms: tree.mechanisms, priorities });
    }
  };
  const handle = watchClusterTree(client, root, {
    onUpdate(update) {
      tree = update;
      if (resolver && sameList(resolved, update.mechanisms)) return report();
      // The priorities of the old mechanisms no longer describe the tree: wait for new ones.
      priorities = undefined;
      resolved = update.mechanisms;
      const resolverListener = {
        onUpdate(next: readonly Priority[]) {
          priorities = next;
          report();
        },
        onError(error: XdsError) {
          if (!cancelled) listener.onNoEndpoints?.(error);
        },
      };
      if (resolver) resolver.updateMechanisms(update.mechanisms);
      else {
        const resolverOptions = options.dnsResolver ? { dnsResolver: options.dnsResolver } : {};
        resolver = new ClusterResolver(
          client,
          update.mechanisms,
          resolverListener,
          resolverOptions,
        );
      }
    },
    onError(error) {
      // No usable configuration: drop the resolver; the next good tree starts a new one.
      resolver?.close();
      resolver = undefined;
      resolved = undefined;
      priorities = undefined;
      tree = undefined;
      if (!cancelled) listener.onError(error);
    },
  });
  return {
    cancel() {
      cancelled = true;
      handle.cancel();
      resolver?.close();
    },
  };
}

function sameList(a: readonly unknown[] | undefined, b: readonly unknown[]): boolean {
  return a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
}
