// The server's per-RPC cost of per-call telemetry (issue 22): the same grpc-js server without
// telemetry, with `serverTelemetryInterceptor()` recording A66's metrics, and with it making A72's
// spans (the interceptor an XdsServer puts first on every chain), each in a process of its own
// (the SDK loads only where it is used), paired by round. This process is the client; each
// server measures its own CPU over each round's RPCs.
//   npx tsx bench/rpc-server.ts [--rpcs 20000] [--rounds 5] [--compare DIR]
// `--compare DIR` adds metrics and traces servers loading the library from DIR, a copy of an
// earlier build's dist/lib (`cp -r dist/lib .tmp/before` before the change), in the same rounds.
import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';
import { DIST } from './clients';
import { burst, identity } from './rpc-burst';
import { ECHO_METHOD } from './rpc-protocol';
import { median } from './stats';
import { telemetryOptions } from './telemetry-sdk';

const CONCURRENCY = 100;

/** What a server process is asked: to start counting its CPU, or to say what it counted. */
type Command = 'start' | 'stop';

/** The child: one server (`telemetry`: none, metrics or traces; the library from `dist`). */
async function serve(telemetry: string, dist: string): Promise<void> {
  const interceptors: grpc.ServerInterceptor[] = [];
  if (telemetry !== 'none') {
    const ours = require(path.join(dist, 'grpc', 'index.js')) as typeof import('../lib/grpc');
    interceptors.push(ours.serverTelemetryInterceptor(telemetryOptions(telemetry)));
  }
  const server = new grpc.Server({ interceptors });
  server.register(
    ECHO_METHOD,
    (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) =>
      done(null, call.request),
    identity,
    identity,
    'unary',
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  let cpu = process.cpuUsage();
  process.on('message', (command: Command) => {
    // 'start' is answered too, so that the round starts once counting has.
    if (command === 'start') cpu = process.cpuUsage();
    const used = process.cpuUsage(cpu);
    process.send?.(used.user + used.system);
  });
  process.on('disconnect', () => server.forceShutdown());
  process.send?.(port);
}

interface Server {
  readonly name: string;
  readonly child: ChildProcess;
  readonly client: grpc.Client;
  /** µs of server CPU per RPC, one per round. */
  readonly cpu: number[];
  /** RPCs per second, one per round. */
  readonly throughput: number[];
}

function ask<T>(child: ChildProcess, command?: Command): Promise<T> {
  const answer = new Promise<T>((resolve) => child.once('message', resolve));
  if (command) child.send(command);
  return answer;
}

async function startServer(name: string, telemetry: string, dist: string): Promise<Server> {
  const child = fork(__filename, ['--serve', telemetry, dist], {
    cwd: path.resolve(__dirname, '..'),
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await ask<number>(child);
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return { name, child, client, cpu: [], throughput: [] };
}

async function round(server: Server, rpcs: number): Promise<void> {
  await ask<number>(server.child, 'start');
  const start = performance.now();
  await burst(server.client, rpcs, CONCURRENCY);
  const ms = performance.now() - start;
  const micros = await ask<number>(server.child, 'stop');
  server.cpu.push(micros / rpcs);
  server.throughput.push((rpcs / ms) * 1000);
}

function option(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i < 0 ? undefined : argv[i + 1];
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--serve') return serve(argv[1]!, argv[2]!);
  const rpcs = Number(option(argv, '--rpcs') ?? 20_000);
  const rounds = Number(option(argv, '--rounds') ?? 5);
  const compare = option(argv, '--compare');
  const kinds: [string, string, string][] = [
    ['none', 'none', DIST],
    ['metrics', 'metrics', DIST],
    ['traces', 'traces', DIST],
  ];
  if (compare) {
    const before = path.resolve(compare);
    kinds.push(['metrics (before)', 'metrics', before], ['traces (before)', 'traces', before]);
  }
  const servers = await Promise.all(kinds.map(([name, t, dist]) => startServer(name, t, dist)));
  try {
    for (const s of servers) await burst(s.client, 10_000, CONCURRENCY); // warm-up: JIT, connection
    for (let r = 0; r < rounds; r++) {
      // Each round in another order, so that no server always follows the same one.
      for (let i = 0; i < servers.length; i++)
        await round(servers[(i + r) % servers.length]!, rpcs);
    }
    const floor = median(servers[0]!.cpu);
    console.log(
      `${rounds} rounds of ${rpcs.toLocaleString('en-US')} unary RPCs, ${CONCURRENCY} in flight`,
    );
    for (const s of servers) {
      const cpu = median(s.cpu);
      const delta = cpu - floor;
      const extra = s === servers[0] ? '' : ` (${delta < 0 ? '' : '+'}${delta.toFixed(1)} µs)`;
      const rate = Math.round(median(s.throughput)).toLocaleString('en-US');
      const rounds = s.cpu.map((c) => c.toFixed(1)).join(' ');
      console.log(
        `${s.name}: server ${cpu.toFixed(1)} µs CPU per RPC${extra}, ${rate} RPC/s [${rounds}]`,
      );
    }
  } finally {
    for (const s of servers) {
      s.client.close();
      s.child.disconnect();
    }
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
