// npm run bench [-- --quick] [--filter REGEX] [--markdown] [--list] [--cpu-prof DIR]
//                [--heap-snapshot DIR]
//
// Runs every suite of bench/suites/ (one file each) through our client, @grpc/grpc-js-xds's and the
// protobufjs floor against one loopback management server, and prints one table. See
// bench/README.md for what is measured and how to profile one workload.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DIST, ROOT } from './clients';
import { SEED } from './fixtures';
import { BenchServer, ClientProcess } from './harness';
import { IMPORT_TITLE } from './suites/import';
import { channelHeapTargets } from './suites/memory-channels';
import { rpcTargets } from './suites/rpc';
import { Results, markdown, table } from './stats';
import { config, n, type Config } from './suite';
import { SUITES } from './suites';

interface Options {
  readonly quick: boolean;
  readonly cpuProf: string | undefined;
  readonly heapSnapshot: string | undefined;
  readonly filter: RegExp | undefined;
  readonly markdown: boolean;
  readonly list: boolean;
}

function parseArgs(argv: readonly string[]): Options {
  let quick = false;
  let filter: RegExp | undefined;
  let md = false;
  let list = false;
  let cpuProf: string | undefined;
  let heapSnapshot: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--quick') quick = true;
    else if (arg === '--cpu-prof') {
      cpuProf = argv[++i];
      if (cpuProf === undefined) throw new Error('--cpu-prof needs a directory');
    } else if (arg === '--heap-snapshot') {
      heapSnapshot = argv[++i];
      if (heapSnapshot === undefined) throw new Error('--heap-snapshot needs a directory');
    } else if (arg === '--markdown') md = true;
    else if (arg === '--list') list = true;
    else if (arg === '--filter' || arg.startsWith('--filter=')) {
      const source = arg === '--filter' ? argv[++i] : arg.slice('--filter='.length);
      if (source === undefined) throw new Error('--filter needs a regular expression');
      filter = new RegExp(source);
    } else {
      throw new Error(
        `unknown option ${arg} (try --quick, --filter REGEX, --markdown, --list, --cpu-prof DIR, ` +
          '--heap-snapshot DIR)',
      );
    }
  }
  return { quick, cpuProf, heapSnapshot, filter, markdown: md, list };
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

/** The clients run the built package: build it when dist/ is missing or older than lib/. */
function ensureBuilt(): void {
  const index = path.join(DIST, 'index.js');
  const built = fs.existsSync(index) ? fs.statSync(index).mtimeMs : 0;
  if (built >= newestMtime(path.join(ROOT, 'lib'))) return;
  console.error(built ? 'dist/ is older than lib/: npm run build' : 'no dist/: npm run build');
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status === 0) return;
  const output = `${build.stdout}${build.stderr}`.trim();
  if (!built) throw new Error(`npm run build failed:\n${output}`);
  console.error(`npm run build failed; measuring the existing dist/:\n${output}\n`);
}

function header(): string {
  const cpus = os.cpus();
  const cpu = `${cpus[0]?.model.trim() ?? 'unknown CPU'} × ${cpus.length}`;
  const date = new Date().toISOString().slice(0, 10);
  return `xds-client bench · Node ${process.version} · ${cpu} · ${date} · seed 0x${SEED.toString(16)}`;
}

function percent(value: number): string {
  return `${(value * 100).toFixed(1)} %`;
}

/** DESIGN.md's targets, each with the measured figure beside it. */
function targets(results: Results, cfg: Config): string[] {
  const lines: string[] = [];
  const mark = (met: boolean) => (met ? 'met   ' : 'MISSED');
  const compared = results.shown().filter((m) => m.impl === 'ours');
  const slower = compared.filter((m) => (results.ratio(m.title, 'peer') ?? 0) >= 1);
  const withPeer = compared.filter((m) => results.ratio(m.title, 'peer') !== undefined);
  if (withPeer.length > 0) {
    const worst = Math.max(...withPeer.map((m) => results.ratio(m.title, 'peer')!));
    lines.push(
      `${mark(slower.length === 0)} faster than the peer on every workload (worst ours/peer ` +
        `${worst.toFixed(2)}×${slower.length ? `: ${slower.map((m) => m.title).join('; ')}` : ''})`,
    );
  }
  const large = n(cfg.largeClusters);
  const scaled = cfg.largeClusters === 10_000 ? '' : ' (quick size; the target is for 10,000)';
  const processing = results.ratio(`CDS ${large} cold · client processing`, 'floor');
  const endToEnd = results.ratio(`CDS ${large} cold → all delivered`, 'floor');
  if (processing !== undefined && endToEnd !== undefined) {
    lines.push(
      `${mark(processing <= 2)} cold CDS ${large} within 2× of the protobufjs floor ` +
        `(client processing ${processing.toFixed(2)}×, end to end ${endToEnd.toFixed(2)}×)${scaled}`,
    );
  }
  const coldAck = results.median(`CDS ${large} cold · client bytes → ACK`, 'ours');
  const resendAck = results.median(`CDS ${large} re-sent unchanged · client processing`, 'ours');
  const coldE2e = results.median(`CDS ${large} cold → ACK at server`, 'ours');
  const resendE2e = results.median(`CDS ${large} re-sent unchanged → ACK`, 'ours');
  if (coldAck && resendAck && coldE2e && resendE2e) {
    lines.push(
      `${mark(resendAck / coldAck < 0.1)} an unchanged re-send costs under 10 % of a cold ` +
        `delivery (client processing ${percent(resendAck / coldAck)}; end to end, with the ` +
        `server encoding and the transfer, ${percent(resendE2e / coldE2e)})${scaled}`,
    );
  }
  // Issue 15: every JIT state within 2× of the floor in the same state (EDS within 2.5×).
  const eds = `EDS ${n(cfg.assignments)} × ${cfg.endpointsPerAssignment}`;
  const states = [
    [`CDS ${large} as a fresh process's first response`, 2],
    [`CDS ${large} after one ${n(cfg.secondWarmupClusters)}-cluster response`, 2],
    [`CDS ${large} cold`, 2],
    [`${eds} as a fresh process's first response`, 2.5],
    [`${eds} after one ${n(cfg.secondWarmupAssignments)}-assignment response`, 2.5],
    [`${eds} endpoints cold`, 2.5],
  ] as const;
  for (const [state, limit] of states) {
    const ratio = results.ratio(`${state} · client processing`, 'floor');
    if (ratio === undefined) continue;
    lines.push(
      `${mark(ratio <= limit)} ${state}: within ${limit}× of the floor in the same state ` +
        `(client processing ${ratio.toFixed(2)}×)${scaled}`,
    );
  }
  const bare = results.ratio(
    `CDS ${large} re-sent unchanged → ACK (floor: bare transport)`,
    'floor',
  );
  if (bare !== undefined) {
    lines.push(
      `${mark(bare <= 1.1)} an unchanged re-send within 10 % of the bare transport time for the ` +
        `bytes (→ ACK at the server, ${bare.toFixed(2)}×)${scaled}`,
    );
  }
  // Issue 25: cold deliveries end to end within 1.3× of the protobufjs floor (decoding and
  // validating cheaper than protobufjs's decode alone), in every JIT state the bench has.
  for (const [state] of states) {
    const ratio = results.ratio(`${state} → all delivered`, 'floor');
    if (ratio === undefined) continue;
    lines.push(
      `${mark(ratio <= 1.3)} ${state}: end to end within 1.3× of the floor, issue 25 ` +
        `(${ratio.toFixed(2)}×)${scaled}`,
    );
  }
  const importMs = results.median(IMPORT_TITLE, 'ours');
  if (importMs !== undefined) {
    lines.push(`${mark(importMs < 100)} import under 100 ms (${importMs.toFixed(1)} ms)`);
  }
  // Paired: the median of each process's own part, on top of grpc-js loaded in it first.
  const over = results.median(`${IMPORT_TITLE}: ours on top of grpc-js`, 'ours');
  if (over !== undefined) {
    lines.push(
      `${mark(over <= 10)} import within 10 ms of require('@grpc/grpc-js'), issue 25 ` +
        `(${over.toFixed(1)} ms over it, in the same process)`,
    );
  }
  const perWatcher = results.median('bytes per added watcher', 'ours');
  if (perWatcher !== undefined) {
    lines.push(
      `${mark(perWatcher < 1024)} no per-watcher copy of resources ` +
        `(${perWatcher.toFixed(0)} bytes per added watcher; identity check below)`,
    );
  }
  lines.push(...rpcTargets(results, cfg.rpc));
  lines.push(...channelHeapTargets(results, cfg.channelHeap));
  return lines;
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const workloads = SUITES.flatMap((suite) => suite.workloads);
  if (options.list) {
    for (const w of workloads) console.log(`${w.id.padEnd(16)} ${w.description}`);
    return;
  }
  // Opt-in workloads (the scale ones) run only when a --filter selects them.
  const optIn = new Set(workloads.filter((w) => w.optIn).map((w) => w.id));
  const wanted = (id: string) => options.filter?.test(id) ?? !optIn.has(id);
  const suites = SUITES.filter((suite) => suite.workloads.some((w) => wanted(w.id)));
  if (suites.length === 0) {
    throw new Error(`--filter ${options.filter}: no workload matches (see --list)`);
  }
  ensureBuilt();
  if (options.cpuProf) {
    ClientProcess.profileDir = path.resolve(options.cpuProf);
    fs.mkdirSync(ClientProcess.profileDir, { recursive: true });
  }
  const heapSnapshots = options.heapSnapshot && path.resolve(options.heapSnapshot);
  if (heapSnapshots) fs.mkdirSync(heapSnapshots, { recursive: true });
  const cfg = config(options.quick);
  const started = performance.now();
  const bench = await BenchServer.start();
  const results = new Results(wanted);
  const notes: string[] = [];
  const progress = (line: string) => {
    if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${line}`);
  };
  try {
    for (const suite of suites)
      await suite.run({ config: cfg, bench, results, notes, progress, heapSnapshots }, wanted);
  } finally {
    progress('');
    await bench.close();
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  console.log(header());
  console.log(options.markdown ? markdown(results) : table(results));
  for (const note of notes) console.log(`  ${note}`);
  console.log(`\nTargets (DESIGN.md, "Performance and scale"):`);
  for (const line of targets(results, cfg)) console.log(`  ${line}`);
  console.log(`\n${options.quick ? 'quick run' : 'full run'} in ${seconds} s`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
