// What the demo prints of its XdsClient (the one the channel's resolver uses): listener →
// route → cluster tree → priorities, each block as it arrives, and the latest tree in `state`.
import type { XdsError } from '../errors';
import type { RouteConfigUpdate } from '../resources/route-config/update';
import type { XdsClient } from '../xds-client';
import type { Palette } from './colors';
import { oneLine } from './errors';
import {
  renderClusterTree,
  renderListener,
  renderPriorities,
  renderRoute,
  type TreeSnapshot,
} from './render';
import { watchTree } from './tree-watch';

export interface DemoState {
  tree: TreeSnapshot | undefined;
  treeError: XdsError | undefined;
  nacks: number;
}

/** Follows `listenerName` down to its route's cluster tree, printing each block through `out`. */
export function followListener(
  client: XdsClient,
  listenerName: string,
  p: Palette,
  out: (line: string) => void,
  state: DemoState,
): void {
  let routeName: string | undefined;
  let root: string | undefined;
  // The discovery mechanisms last printed: a tree of the same shape prints its priorities only.
  let printedShape: string[] | undefined;
  // The banner names the node: a line gives an error's reason alone.
  const error = (what: string) => (e: XdsError) => out(p.red(`✗ ${what}: ${oneLine(e.reason)}`));
  const ambient = (what: string) => (e: XdsError) =>
    out(p.yellow(`! ${what}: ${oneLine(e.reason)}`));
  const block = (lines: string[]) => {
    out('');
    for (const line of lines) out(line);
  };

  const onRoute = (route: RouteConfigUpdate) => {
    block(renderRoute(p, route));
    const action = route.virtualHosts[0]?.routes[0]?.action;
    const cluster = action?.type === 'cluster' ? action.cluster : undefined;
    if (cluster === undefined || cluster === root) return;
    root = cluster;
    watchTree(client, cluster, {
      onUpdate(tree) {
        state.tree = tree;
        state.treeError = undefined;
        const shape = tree.mechanisms.map((m) => `${m.type} ${m.cluster} ${m.dnsHostname ?? ''}`);
        const sameShape = printedShape?.join('\n') === shape.join('\n');
        printedShape = shape;
        if (sameShape)
          block([
            p.bold('priorities now:'),
            ...renderPriorities(p, tree.priorities).map((l) => `  ${l}`),
          ]);
        else block(renderClusterTree(p, cluster, tree));
      },
      onError(e) {
        state.tree = undefined;
        state.treeError = e;
        block([p.red(`✗ cluster tree ${cluster}: ${oneLine(e.reason)}`)]);
      },
    });
  };

  client.watchListener(listenerName, {
    onResourceChanged(listener) {
      block(renderListener(p, listener));
      const next = listener.httpConnectionManager.routeConfigName;
      if (next === undefined || next === routeName) return;
      routeName = next;
      client.watchRouteConfiguration(next, {
        onResourceChanged: onRoute,
        onResourceError: error(`route ${next}`),
        onAmbientError: ambient(`route ${next}`),
      });
    },
    onResourceError: error(`listener ${listenerName}`),
    onAmbientError: ambient(`listener ${listenerName}`),
  });
}
