// The RPC path alone, for profiling: this process is the client (ours, the peer or the floor),
// a child process holds the two backends and the management server, and the CPU profiler runs
// during the timed rounds only (not start-up, not the warm-up).
//   npx tsx bench/rpc-hot.ts ours [--rpcs 20000] [--rounds 3] [--telemetry metrics|traces [--unrecorded]]
//                                 [--profile .tmp/ours.cpuprofile]
//   npx tsx bench/profile.ts .tmp/ours.cpuprofile
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as inspector from 'node:inspector';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';
import { DIST } from './clients';
import { burst } from './rpc-burst';
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
  const impl = argv[0] as Impl;
  if (!['ours', 'peer', 'floor'].includes(impl)) {
    throw new Error(
      'usage: rpc-hot.ts ours|peer|floor [--rpcs N] [--rounds N] [--telemetry metrics|traces [--unrecorded]] [--profile FILE]',
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
    const client = channel(impl, served, telemetry, recorded);
    await new Promise<void>((resolve, reject) =>
      client.waitForReady(Date.now() + 10_000, (error) => (error ? reject(error) : resolve())),
    );
    await burst(client, 10_000, 100);
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
    for (let round = 0; round < rounds; round++) {
      const cpu = process.cpuUsage();
      const start = performance.now();
      await burst(client, rpcs, 100);
      const ms = performance.now() - start;
      const used = process.cpuUsage(cpu);
      const perSecond = Math.round((rpcs / ms) * 1000).toLocaleString('en-US');
      const cpuMicros = ((used.user + used.system) / rpcs).toFixed(1);
      console.log(`${impl}: ${perSecond} RPC/s, ${cpuMicros} µs CPU per RPC`);
    }
    if (profile) {
      const { profile: data } = (await post('Profiler.stop')) as { profile: object };
      fs.writeFileSync(profile, JSON.stringify(data));
      console.log(`profile of ${n(rounds * rpcs)} RPCs: ${profile}`);
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
    client.close();
  } finally {
    child.disconnect();
  }
}

const n = (value: number): string => value.toLocaleString('en-US');

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
