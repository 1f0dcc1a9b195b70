// `xds-client demo` (`npm start`): the library at work in one command. A management server on
// 127.0.0.1 serves examples/demo-snapshot.yaml, an XdsClient follows listener → route →
// cluster tree → discovery mechanisms → priorities, and a script changes the snapshot.
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { XdsError } from '../errors';
import type { RouteConfigUpdate } from '../resources/route-config/update';
import { ManagementServer } from '../testing/management-server';
import { edsCluster, endpoints } from '../testing/resources';
import { XdsClient } from '../xds-client';
import { noPositionals, parseArgs } from './args';
import { colorSupported, palette, type Palette } from './colors';
import { CliError, EXIT, oneLine } from './errors';
import { DEMO_HELP } from './help';
import { logProtocol } from './protocol-log';
import {
  activePriority,
  formatAddress,
  renderClusterTree,
  renderListener,
  renderPriorities,
  renderRoute,
  type TreeSnapshot,
} from './render';
import { applySnapshot, describeSnapshot, readSnapshot } from './snapshot';
import { watchTree } from './tree-watch';
import type { Io } from './watch';

const LISTENER = 'demo.example.com';
const NODE_ID = 'xds-client-demo';
/** How long a step may take before the demo calls it a bug. */
const STEP_TIMEOUT_MS = 5000;

/** examples/demo-snapshot.yaml, from lib/cli (tsx) or dist/lib/cli (built). */
export function findExample(name: string): string {
  for (let dir = __dirname, i = 0; i < 5; dir = join(dir, '..'), i++) {
    const candidate = join(dir, 'examples', name);
    if (existsSync(candidate)) return candidate;
  }
  throw new CliError(
    EXIT.USAGE,
    `cannot find examples/${name}: run the demo from a clone of xds-client`,
  );
}

interface DemoState {
  tree: TreeSnapshot | undefined;
  treeError: XdsError | undefined;
  nacks: number;
}

export async function runDemo(argv: readonly string[], io: Io): Promise<number> {
  const args = parseArgs('demo', argv, {
    fast: { kind: 'boolean' },
    'no-color': { kind: 'boolean' },
    help: { kind: 'boolean', short: 'h' },
  });
  if (args.bool('help')) {
    io.out(DEMO_HELP);
    return EXIT.OK;
  }
  noPositionals('demo', args);
  const p = palette(!args.bool('no-color') && colorSupported());
  const pauseMs = args.bool('fast') ? 0 : 1000;
  const file = findExample('demo-snapshot.yaml');
  const snapshot = readSnapshot(file);
  const server = await ManagementServer.start();
  let client: XdsClient | undefined;
  try {
    applySnapshot(server, snapshot);
    const shown = relative(process.cwd(), file) || file;
    io.out(p.bold('xds-client demo: an XdsClient against the built-in management server'));
    io.out(`  server  ${p.cyan(server.address)} serving ${shown} (${describeSnapshot(snapshot)})`);
    io.out(`  client  node "${NODE_ID}", watching listener ${p.cyan(LISTENER)}`);
    io.out('');
    client = new XdsClient({ bootstrap: server.bootstrap({ nodeId: NODE_ID }) });
    await script(server, client, p, io, pauseMs);
  } finally {
    client?.close();
    await server.close();
  }
  return EXIT.OK;
}

async function script(
  server: ManagementServer,
  client: XdsClient,
  p: Palette,
  io: Io,
  pauseMs: number,
): Promise<void> {
  const out = io.out;
  const state: DemoState = { tree: undefined, treeError: undefined, nacks: 0 };
  logProtocol(client, p, (line) => out(`  ${line}`));
  client.on('nack', () => state.nacks++);
  follow(client, p, out, state);

  const until = async (what: string, done: () => boolean) => {
    const deadline = Date.now() + STEP_TIMEOUT_MS;
    while (!done()) {
      if (Date.now() > deadline) {
        throw new CliError(
          EXIT.RESOURCE,
          `demo: ${what} did not happen within ${STEP_TIMEOUT_MS} ms`,
        );
      }
      await sleep(10);
    }
  };
  const traffic = () => {
    const active = state.tree && activePriority(state.tree.priorities);
    if (!active) return out(p.red('  ⇒ no priority has endpoints: RPCs fail'));
    const addresses = active.localities.flatMap((l) => l.endpoints.map(formatAddress));
    out(
      `  ${p.green('⇒')} RPCs to ${LISTENER} go to ${p.green(active.name)}: ${addresses.join(', ')}`,
    );
  };
  const step = (n: number, title: string, action: string) => {
    out('');
    out(p.bold(`━━ ${n}/3  ${title} ━━`));
    out(p.dim(`  server: ${action}`));
  };

  await until('the first cluster tree', () => (state.tree?.priorities.length ?? 0) >= 3);
  traffic();
  await sleep(pauseMs);

  step(1, "B's endpoints vanish", 'endpoints B → no endpoints');
  server.setResource('endpoint', endpoints('B', []));
  await until('failover to D', () => activePriority(state.tree?.priorities ?? [])?.cluster === 'D');
  out(`  ${p.yellow('failover:')} B has no endpoints, so the next priority takes over`);
  traffic();
  await sleep(pauseMs);

  step(
    2,
    'a bad update to cluster D is NACKed',
    'cluster D → eds_config: a file path (gRPC needs ADS)',
  );
  const nacksBefore = state.nacks;
  server.setResource('cluster', {
    ...edsCluster('D'),
    eds_cluster_config: { eds_config: { path: '/etc/envoy/eds.yaml' } },
  });
  await until('the NACK', () => state.nacks > nacksBefore);
  await until('the NACK recorded', () => dumpOf(client, 'D')?.status === 'NACKED');
  const d = dumpOf(client, 'D')!;
  out(
    `  ${p.yellow('kept:')} cluster D stays at version ${d.version} (version ${d.failedVersion} ` +
      'was rejected, A46); nothing else changes',
  );
  traffic();
  await sleep(pauseMs);

  step(3, 'cluster D is deleted', 'cluster D removed from the CDS snapshot');
  server.removeResource('cluster', 'D');
  await until('the tree error', () => state.treeError !== undefined);
  out(`  ${p.red('⇒')} A37: a channel for cluster A fails its RPCs (UNAVAILABLE) until D is back`);
  await sleep(Math.min(pauseMs, 500));
  out('');
  out(p.dim('demo done: closing the client and the server.'));
}

/** Listener → route → cluster tree, printing each as it arrives. */
function follow(client: XdsClient, p: Palette, out: (line: string) => void, state: DemoState) {
  let routeName: string | undefined;
  let root: string | undefined;
  let printedTree: TreeSnapshot | undefined;
  const error = (what: string) => (e: XdsError) => out(p.red(`✗ ${what}: ${oneLine(e.message)}`));
  const ambient = (what: string) => (e: XdsError) =>
    out(p.yellow(`! ${what}: ${oneLine(e.message)}`));
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
        const sameShape =
          printedTree !== undefined &&
          printedTree.mechanisms.length === tree.mechanisms.length &&
          printedTree.mechanisms.every((m, i) => m === tree.mechanisms[i]);
        printedTree = tree;
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
        printedTree = undefined;
        block([p.red(`✗ cluster tree ${cluster}: ${oneLine(e.message)}`)]);
      },
    });
  };

  client.watchListener(LISTENER, {
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
    onResourceError: error(`listener ${LISTENER}`),
    onAmbientError: ambient(`listener ${LISTENER}`),
  });
}

function dumpOf(client: XdsClient, cluster: string) {
  return client.dump().find((d) => d.name === cluster && d.typeUrl.endsWith('.Cluster'));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
