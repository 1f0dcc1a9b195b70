// `xds-client demo` (`npm start`): real RPCs through xDS in one command. A grpc-js server for
// every endpoint of examples/demo-snapshot.yaml, the management server on 127.0.0.1 serving that
// snapshot (pointed at those servers), and a grpc-js channel on xds:///demo.example.com through
// xds-client/grpc. The demo prints what the channel's XdsClient receives (listener → route →
// cluster tree → priorities, every request, ACK and NACK), then changes the snapshot step by
// step and, after each step, sends RPCs and counts which backend answered them.
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { leaseClient, openClientCount, type ClientLease } from '../grpc/client-pool';
import { ManagementServer } from '../testing/management-server';
import { edsCluster, endpoints } from '../testing/resources';
import type { XdsClient } from '../xds-client';
import { noPositionals, parseArgs } from './args';
import { colorSupported, palette, type Palette } from './colors';
import { DemoChannel, startBackends, type Backend, type Tally } from './demo-rpcs';
import { followListener, type DemoState } from './demo-view';
import { CliError, EXIT } from './errors';
import { DEMO_HELP } from './help';
import { logProtocol } from './protocol-log';
import { applySnapshot, describeSnapshot, readSnapshot, type Snapshot } from './snapshot';
import type { Io } from './watch';

const LISTENER = 'demo.example.com';
const NODE_ID = 'xds-client-demo';
/** RPCs counted after each step. */
const RPCS = 20;
/** How long a step may take before the demo calls it a bug. */
const STEP_TIMEOUT_MS = 5000;
const STEPS = 5;

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
  const { snapshot, backends } = await startBackends(readSnapshot(file));
  let server: ManagementServer | undefined;
  let lease: ClientLease | undefined;
  let channel: DemoChannel | undefined;
  try {
    server = await ManagementServer.start();
    applySnapshot(server, snapshot);
    const target = `xds:///${LISTENER}`;
    const shown = relative(process.cwd(), file) || file;
    io.out(p.bold(`xds-client demo: real RPCs through ${target}`));
    io.out(
      `  server    ${p.cyan(server.address)} serving ${shown} (${describeSnapshot(snapshot)})`,
    );
    io.out(
      `  backends  ${describeBackends(p, backends)}: grpc-js servers answering with their name`,
    );
    io.out(`  channel   grpc-js on ${p.cyan(target)} (xds-client/grpc), node "${NODE_ID}"`);
    io.out(p.dim("  below: the channel's XdsClient, and after each step who answered its RPCs"));
    // Channels share one XdsClient per bootstrap and target authority: leasing it with the
    // channel's bootstrap text shows what the channel's resolver receives, as it receives it.
    const bootstrap = JSON.stringify(server.bootstrap({ nodeId: NODE_ID }));
    lease = leaseClient({ bootstrap }, '');
    channel = new DemoChannel(target, bootstrap);
    await script({ server, client: lease.client, channel, snapshot, p, io, pauseMs });
  } finally {
    channel?.close();
    lease?.release();
    await server?.close();
    for (const backend of backends) backend.close();
  }
  return EXIT.OK;
}

/** `b1 b2 (B) · d1 (D) · e1 (E)`. */
function describeBackends(p: Palette, backends: readonly Backend[]): string {
  const byCluster = new Map<string, string[]>();
  for (const b of backends) byCluster.set(b.cluster, [...(byCluster.get(b.cluster) ?? []), b.name]);
  return [...byCluster]
    .map(([cluster, names]) => `${names.map((n) => p.green(n)).join(' ')} (${cluster})`)
    .join(p.dim(' · '));
}

interface ScriptContext {
  server: ManagementServer;
  client: XdsClient;
  channel: DemoChannel;
  /** What the server served at the start. */
  snapshot: Snapshot;
  p: Palette;
  io: Io;
  pauseMs: number;
}

async function script(context: ScriptContext): Promise<void> {
  const { server, client, channel, snapshot, p, io, pauseMs } = context;
  const out = io.out;
  const state: DemoState = { tree: undefined, treeError: undefined, nacks: 0 };
  logProtocol(client, p, (line) => out(`  ${line}`));
  client.on('nack', () => state.nacks++);
  followListener(client, LISTENER, p, out, state);

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
  /** Waits for the channel to follow (answers from `expected` only), then counts RPCS. */
  const rpcs = async (expected: readonly string[]) => {
    await channel.settle(expected, STEP_TIMEOUT_MS);
    for (const line of renderTally(p, await channel.count(RPCS))) out(`  ${line}`);
  };
  const step = (n: number, title: string, action: string) => {
    out('');
    out(p.bold(`━━ ${n}/${STEPS}  ${title} ━━`));
    out(p.dim(`  server: ${action}`));
  };

  await until('the first cluster tree', () => (state.tree?.priorities.length ?? 0) >= 3);
  out('');
  await rpcs(['b1', 'b2']);
  if (openClientCount() !== 1) {
    throw new CliError(EXIT.RESOURCE, "demo: the channel did not share the demo's XdsClient");
  }
  await sleep(pauseMs);

  step(1, "B's endpoints vanish", 'endpoints B → no endpoints');
  server.setResource('endpoint', endpoints('B', []));
  await rpcs(['d1']);
  await sleep(pauseMs);

  step(2, 'a bad update to cluster D is NACKed', 'cluster D → eds_config: a file path');
  const nacksBefore = state.nacks;
  server.setResource('cluster', {
    ...edsCluster('D'),
    eds_cluster_config: { eds_config: { path: '/etc/envoy/eds.yaml' } },
  });
  await until('the NACK', () => state.nacks > nacksBefore);
  await until('the NACK recorded', () => dumpOf(client, 'D')?.status === 'NACKED');
  const d = dumpOf(client, 'D')!;
  out(
    `  ${p.yellow('kept:')} cluster D stays at version ${d.version} ` +
      `(version ${d.failedVersion} was rejected, A46)`,
  );
  await rpcs(['d1']);
  await sleep(pauseMs);

  step(3, "D's endpoints vanish too", 'endpoints D → no endpoints');
  server.setResource('endpoint', endpoints('D', []));
  await rpcs(['e1']);
  await sleep(pauseMs);

  step(4, 'cluster D is deleted', 'cluster D removed from the CDS snapshot');
  server.removeResource('cluster', 'D');
  await until('the tree error', () => state.treeError !== undefined);
  await rpcs(['UNAVAILABLE']);
  await sleep(pauseMs);

  step(5, 'the snapshot is served again', 'clusters and endpoints as at the start');
  server.setResources('cluster', snapshot.clusters);
  server.setResources('endpoint', snapshot.endpoints);
  await rpcs(['b1', 'b2']);
  await sleep(Math.min(pauseMs, 500));
  out('');
  out(p.dim('demo done: closing the channel, the server and the backends.'));
}

/** `20 RPCs → b1 10 · b2 10`, and for failures the status with its message. */
export function renderTally(p: Palette, tally: Tally): string[] {
  const parts = [...tally.counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([by, n]) => (tally.failures.has(by) ? p.red(`${by} ${n}`) : `${p.green(by)} ${n}`));
  return [
    `${p.bold(`${tally.sent} RPCs`)} → ${parts.join(p.dim(' · '))}`,
    ...[...tally.failures].map(([code, details]) => p.red(`  ${code}: ${details}`)),
  ];
}

function dumpOf(client: XdsClient, cluster: string) {
  return client.dump().find((d) => d.name === cluster && d.typeUrl.endsWith('.Cluster'));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
