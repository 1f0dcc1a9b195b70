// `xds-client serve`: the test management server, fed from a snapshot file and reloaded when
// the file changes, so any xDS client (this one, grpc-js, grpc-go, Envoy) can be pointed at it.
import { statSync } from 'node:fs';
import type { RecordedRequest } from '../testing/recorder';
import { resolve } from 'node:path';
import { ManagementServer } from '../testing/management-server';
import { writeFilesBootstrap, writeSnapshotFiles } from './snapshot-files';
import { noPositionals, parseArgs } from './args';
import { colorSupported, palette, type Palette } from './colors';
import { CliError, EXIT, UsageError, messageOf, oneLine } from './errors';
import { SERVE_HELP } from './help';
import { shortType } from './protocol-log';
import {
  applySnapshot,
  describeSnapshot,
  readSnapshot,
  resourceName,
  type Snapshot,
} from './snapshot';
import { untilSignal, type Io } from './watch';

/** How often the snapshot file is checked for changes. */
const POLL_MS = 250;

/** The file's modification time and size: a change in either is a new snapshot to read. */
function stamp(file: string): string {
  try {
    const stats = statSync(file);
    return `${stats.mtimeMs}:${stats.size}`;
  } catch {
    return 'unreadable';
  }
}

export async function runServe(argv: readonly string[], io: Io): Promise<number> {
  const args = parseArgs('serve', argv, {
    snapshot: { kind: 'string', value: 'FILE' },
    port: { kind: 'string', value: 'N' },
    files: { kind: 'string', value: 'DIR' },
    quiet: { kind: 'boolean' },
    'no-color': { kind: 'boolean' },
    help: { kind: 'boolean', short: 'h' },
  });
  if (args.bool('help')) {
    io.out(SERVE_HELP);
    return EXIT.OK;
  }
  noPositionals('serve', args);
  const file = args.string('snapshot');
  if (file === undefined) throw new UsageError('serve needs --snapshot FILE (YAML or JSON)');
  const port = args.int('port', 0);
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  const p = palette(!args.bool('no-color') && colorSupported());

  // Stamped before reading: a write from now on is seen by the first poll (fs.watchFile takes
  // its first stat later, on another thread, so a write just after start could become its
  // baseline and never be reloaded).
  let seen = stamp(file);
  let snapshot = readSnapshot(file);
  let server: ManagementServer;
  try {
    server = await ManagementServer.start({ port });
  } catch (e) {
    throw new CliError(
      EXIT.USAGE,
      `cannot listen on 127.0.0.1:${port}: ${messageOf(e)}; pick another --port (0: any free port)`,
    );
  }
  const versions = new Map<string, number>();
  const filesDir = args.string('files');
  const push = (next: Snapshot, previous?: Snapshot) => {
    const changed = applySnapshot(server, next, previous);
    for (const key of changed) versions.set(key, (versions.get(key) ?? 0) + 1);
    if (filesDir !== undefined) writeSnapshotFiles(filesDir, next, versions, changed);
    return changed.map((key) => `${key} (version ${versions.get(key)})`);
  };
  if (filesDir !== undefined) {
    // Every kind's file exists from the start (empty ones too), then only changes are written.
    writeFilesBootstrap(filesDir, 'test');
    writeSnapshotFiles(filesDir, snapshot, versions);
  }
  push(snapshot);

  const address = server.address;
  const firstCluster = snapshot.clusters[0];
  const example = firstCluster
    ? `--cluster-tree ${String(resourceName('clusters', firstCluster))}`
    : '--cluster NAME';
  const bootstrap = JSON.stringify(server.bootstrap({ nodeId: 'test' }));
  io.out(`${p.bold('serving')} ${file} (${describeSnapshot(snapshot)}) on ${p.cyan(address)}`);
  io.out(`  watch it:   xds-client watch --server ${address} --node-id test ${example}`);
  io.out(`  any client: GRPC_XDS_BOOTSTRAP_CONFIG='${bootstrap}'`);
  io.out(
    `  REST-JSON:  ${server.restUrl}/v3/discovery:clusters (and :listeners, :routes, :endpoints)`,
  );
  if (filesDir !== undefined) {
    const bootstrapFile = resolve(filesDir, 'bootstrap.json');
    io.out(`  as files:   ${resolve(filesDir)} (FILESYSTEM bootstrap: ${bootstrapFile})`);
  }
  io.out(p.dim(`  reloading when ${file} changes; Ctrl-C to stop`));

  const reload = () => {
    try {
      const next = readSnapshot(file);
      const changed = push(next, snapshot);
      snapshot = next;
      io.out(
        `${p.green('reloaded')} ${file}: ${changed.length ? changed.join(', ') : 'no change'}`,
      );
    } catch (e) {
      io.err(`xds-client: ${messageOf(e)}; still serving the previous snapshot`);
    }
  };
  const poll = setInterval(() => {
    const now = stamp(file);
    if (now === seen) return;
    seen = now;
    reload();
  }, POLL_MS);

  let closed = false;
  if (!args.bool('quiet')) void logRequests(server, p, io.out, () => closed);
  await untilSignal();
  closed = true;
  clearInterval(poll);
  io.out(p.dim('stopping'));
  await server.close();
  return EXIT.OK;
}

/** One line per request the server receives, until it closes. */
async function logRequests(
  server: ManagementServer,
  p: Palette,
  write: (line: string) => void,
  closed: () => boolean,
): Promise<void> {
  let next = 0;
  const lastNames = new Map<string, string>();
  while (!closed()) {
    try {
      await server.waitForRequest(() => true, { after: next, timeoutMs: 2 ** 30 });
    } catch {
      continue; // closed (the loop ends) or the long deadline passed
    }
    for (; next < server.requests.length && !closed(); next++) {
      write(describe(server.requests[next]!, lastNames, p));
    }
  }
}

function describe(r: RecordedRequest, lastNames: Map<string, string>, p: Palette): string {
  const key = `${r.streamId} ${r.typeUrl}`;
  const names = JSON.stringify(r.resourceNames);
  const changed = lastNames.get(key) !== names;
  lastNames.set(key, names);
  const stream = p.dim(`stream ${r.streamId}`);
  const type = shortType(r.typeUrl);
  const node = r.node
    ? p.dim(` from node "${r.node.id}" (${r.node.userAgentName} ${r.node.userAgentVersion})`)
    : '';
  const list = `[${r.resourceNames.join(', ')}]`;
  if (r.errorDetail) {
    return `${stream} ${p.red('✗ NACK   ')} ${type} nonce ${r.responseNonce}: ${p.red(oneLine(r.errorDetail.message))}`;
  }
  if (r.responseNonce === '' || changed) {
    return `${stream} ${p.blue('→ REQUEST')} ${type} ${list}${node}`;
  }
  return `${stream} ${p.green('✓ ACK    ')} ${type} version ${r.versionInfo} ${p.dim(list)}`;
}
