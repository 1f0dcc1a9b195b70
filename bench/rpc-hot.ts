// The RPC path alone, for profiling: this process is the client (ours, the peer or the floor),
// a child process holds the two backends and the management server, and the CPU profiler runs
// during the timed rounds only (not start-up, not the warm-up).
//   npx tsx bench/rpc-hot.ts ours [--rpcs 20000] [--rounds 3] [--telemetry metrics|traces [--unrecorded]]
//                                 [--profile .tmp/ours.cpuprofile] [--alloc]
//   npx tsx bench/profile.ts .tmp/ours.cpuprofile
// Paired: `ours,floor` drives both channels from this one process, alternating round by round
// (the order swapped each round), so both see the same load and JIT state; each round prints
// the first's CPU per RPC over the second's, and the end their medians. --alloc: after the
// timed rounds, one more burst per channel under the sampling heap profiler (rpc-alloc.ts).
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as inspector from 'node:inspector';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';
import { DIST } from './clients';
import { allocationTable, sampleAllocation, type Allocation } from './rpc-alloc';
import { burst } from './rpc-burst';
import { median } from './stats';
import { registerTelemetry, telemetryAlone, type TelemetryKind } from './telemetry-cost';
import { Backends, XdsServer } from './rpc-harness';
import { XDS_SERVICE, type Impl } from './rpc-protocol';

interface Served {
  readonly addresses: readonly string[];
  readonly bootstrap: string;
}

/** The child: backends and management server until the parent goes away. */
async function serve(): Promise<void> {
  const backends = new Backends();
  const addresses = await backends.addresses(0);
  const server = await XdsServer.start(addresses);
  process.send?.({ addresses, bootstrap: server.bootstrap } satisfies Served);
  process.on('disconnect', () => {
    backends.close();
    void server.close();
  });
}

function option(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i < 0 ? undefined : argv[i + 1];
}

function channel(
  impl: Impl,
  served: Served,
  telemetry: TelemetryKind | undefined,
  recorded: boolean,
): grpc.Client {
  const insecure = grpc.credentials.createInsecure();
  if (impl === 'ours') {
    const ours = require(path.join(DIST, 'grpc', 'index.js')) as typeof import('../lib/grpc');
    if (telemetry) registerTelemetry(telemetry, recorded);
    else ours.register();
    const options = { [ours.BOOTSTRAP_OPTION]: served.bootstrap };
    return new grpc.Client(`xds:///${XDS_SERVICE}`, insecure, options);
  }
  if (impl === 'peer') {
    process.env['GRPC_XDS_BOOTSTRAP_CONFIG'] = served.bootstrap;
    (require('@grpc/grpc-js-xds') as { register(): void }).register();
    return new grpc.Client(`xds:///${XDS_SERVICE}`, insecure);
  }
  const roundRobin = JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] });
  return new grpc.Client(`ipv4:${served.addresses.join(',')}`, insecure, {
    'grpc.service_config': roundRobin,
  });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--serve') return serve();
  const impls = (argv[0] ?? '').split(',') as Impl[];
  // The peer and ours both register `xds:`: they cannot share a process.
  const valid = impls.every((impl) => ['ours', 'peer', 'floor'].includes(impl));
  if (!valid || impls.length > 2 || (impls.includes('ours') && impls.includes('peer'))) {
    throw new Error(
      'usage: rpc-hot.ts ours|peer|floor|ours,floor|peer,floor [--rpcs N] [--rounds N] [--telemetry metrics|traces [--unrecorded]] [--profile FILE] [--alloc]',
    );
  }
  const rpcs = Number(option(argv, '--rpcs') ?? 20_000);
  const rounds = Number(option(argv, '--rounds') ?? 3);
  const profile = option(argv, '--profile');
  const telemetry = option(argv, '--telemetry') as TelemetryKind | undefined;
  if (telemetry !== undefined && !['metrics', 'traces'].includes(telemetry)) {
    throw new Error(`--telemetry: metrics or traces, not ${telemetry}`);
  }
  // The hooks run, the records go nowhere (telemetry-cost.ts): the library's own cost.
  const recorded = !argv.includes('--unrecorded');
  const child = fork(__filename, ['--serve'], {
    cwd: path.resolve(__dirname, '..'),
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const served = await new Promise<Served>((resolve) => child.once('message', resolve));
    const clients = impls.map((impl) => channel(impl, served, telemetry, recorded));
    for (const client of clients) {
      await new Promise<void>((resolve, reject) =>
        client.waitForReady(Date.now() + 10_000, (error) => (error ? reject(error) : resolve())),
      );
      await burst(client, 10_000, 100);
    }
    const session = new inspector.Session();
    session.connect();
    const post = (method: string) =>
      new Promise<object>((resolve, reject) =>
        session.post(method, (error, result) => (error ? reject(error) : resolve(result ?? {}))),
      );
    if (profile) {
      await post('Profiler.enable');
      await post('Profiler.start');
    }
    const ratios: number[] = [];
    const micros: number[][] = impls.map(() => []);
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? [...impls.keys()] : [...impls.keys()].reverse();
      for (const i of order) {
        const cpu = process.cpuUsage();
        const start = performance.now();
        await burst(clients[i]!, rpcs, 100);
        const ms = performance.now() - start;
        const used = process.cpuUsage(cpu);
        const perSecond = Math.round((rpcs / ms) * 1000).toLocaleString('en-US');
        micros[i]!.push((used.user + used.system) / rpcs);
        const cpuMicros = micros[i]!.at(-1)!.toFixed(1);
        console.log(`${impls[i]}: ${perSecond} RPC/s, ${cpuMicros} µs CPU per RPC`);
      }
      if (impls.length === 2) {
        ratios.push(micros[0]![round]! / micros[1]![round]!);
        console.log(`  round ${round + 1}: ${impls.join('/')} ${ratios.at(-1)!.toFixed(3)}`);
      }
    }
    if (impls.length === 2) {
      const medians = micros.map((list) => median(list).toFixed(1)).join(' vs ');
      console.log(
        `median ${impls.join('/')}: ${median(ratios).toFixed(3)} ` +
          `(${medians} µs CPU per RPC, ${rounds} paired rounds)`,
      );
    }
    if (profile) {
      const { profile: data } = (await post('Profiler.stop')) as { profile: object };
      fs.writeFileSync(profile, JSON.stringify(data));
      console.log(`profile of ${n(rounds * rpcs)} RPCs: ${profile}`);
    }
    if (argv.includes('--alloc')) {
      const sampled: Allocation[] = [];
      for (const [i, impl] of impls.entries()) {
        sampled.push(await sampleAllocation(session, rpcs, () => burst(clients[i]!, rpcs, 100)));
        const kb = (sampled[i]!.perRpc / 1024).toFixed(2);
        console.log(`${impl}: ${kb} KB allocated per RPC (sampled)`);
      }
      const [first, second] = sampled;
      if (second) console.log(`${impls[0]} allocates per RPC, by function, over ${impls[1]}:`);
      for (const line of allocationTable(first!, second)) console.log(`  ${line}`);
    }
    session.disconnect();
    if (telemetry && recorded) {
      const alone = await telemetryAlone(telemetry, rpcs);
      const micros = (ms: number) => ((ms * 1000) / rpcs).toFixed(1);
      console.log(
        `${telemetry} alone, no RPCs: the SDK's calls ${micros(alone.sdkCpuMs)} µs, ` +
          `our tracers on the SDK ${micros(alone.tracersCpuMs)} µs CPU per RPC`,
      );
    }
    for (const client of clients) client.close();
  } finally {
    child.disconnect();
  }
}

const n = (value: number): string => value.toLocaleString('en-US');

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
