// The server's per-call tracers alone (issue 22), without grpc-js or a network: for each
// simulated unary RPC, A66's ServerCallMetrics and A72's ServerCallSpan (the SDK's providers,
// exporting nowhere) are made, told of one request and one response, and ended, as the
// telemetry interceptor does. Rounds alternate between the library in dist/ and, with
// `--compare DIR`, an earlier build's copy (`cp -r dist/lib .tmp/before` before a change),
// in this one process, so that the two are measured under the same load.
//   npx tsx bench/server-tracer.ts [--calls 200000] [--rounds 7] [--compare DIR]
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Metadata } from '@grpc/grpc-js';
import { propagation, type MeterProvider, type TracerProvider } from '@opentelemetry/api';
import { DIST } from './clients';
import { median } from './stats';
import { telemetryOptions } from './telemetry-sdk';

const PATH = '/bench.Echo/Echo';
const METHOD = 'bench.Echo/Echo';
const SIZE = 4;

/** One server tracer, as a build's modules make it. */
interface Tracer {
  sentMessage(...args: unknown[]): void;
  receivedMessage(...args: unknown[]): void;
  end(code: number, details: string): void;
}

/** One build of the library: a fresh server tracer of each kind per call. */
interface Build {
  readonly name: string;
  readonly metrics: () => Tracer;
  readonly span: () => Tracer;
  /** The arguments of one message of SIZE bytes, uncompressed, in this build's form. */
  readonly message: readonly unknown[];
  readonly micros: { metrics: number[]; span: number[] };
}

function load(name: string, dist: string): Build {
  const telemetry = path.join(dist, 'grpc', 'telemetry');
  const { ServerCallMetrics } = require(path.join(telemetry, 'server-metrics.js')) as {
    ServerCallMetrics: new (instruments: unknown, method: unknown) => Tracer;
  };
  // Since label-sets.ts, a server tracer takes its method's label sets; before, its name.
  const labelSets = path.join(telemetry, 'label-sets.js');
  const method = fs.existsSync(labelSets)
    ? new (require(labelSets) as typeof import('../lib/grpc/telemetry/label-sets')).LabelSets(
        undefined,
      ).of(PATH)
    : METHOD;
  const { ServerCallSpan } = require(path.join(telemetry, 'server-span.js')) as {
    ServerCallSpan: new (...args: unknown[]) => Tracer;
  };
  const { serverCallInstruments } = require(path.join(telemetry, 'instruments.js')) as {
    serverCallInstruments(provider: MeterProvider): unknown;
  };
  const { meterProvider } = telemetryOptions('metrics') as { meterProvider: MeterProvider };
  const { tracerProvider } = telemetryOptions('traces') as { tracerProvider: TracerProvider };
  const instruments = serverCallInstruments(meterProvider);
  const tracer = tracerProvider.getTracer('bench');
  const metadata = new Metadata();
  // Before numbers were passed, a message was an object ({ size }).
  const numbers = ServerCallMetrics.prototype.receivedMessage.length === 2;
  return {
    name,
    metrics: () => new ServerCallMetrics(instruments, method),
    span: () => new ServerCallSpan(tracer, propagation, PATH, metadata),
    message: numbers ? [SIZE, undefined] : [{ size: SIZE }],
    micros: { metrics: [], span: [] },
  };
}

/** µs per call of `calls` unary calls through tracers from `make`. */
function time(make: () => Tracer, message: readonly unknown[], calls: number): number {
  const start = performance.now();
  for (let i = 0; i < calls; i++) {
    const tracer = make();
    tracer.receivedMessage(...message);
    tracer.sentMessage(...message);
    tracer.end(0, '');
  }
  return ((performance.now() - start) * 1000) / calls;
}

function option(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i < 0 ? undefined : argv[i + 1];
}

function main(): void {
  const argv = process.argv.slice(2);
  const calls = Number(option(argv, '--calls') ?? 200_000);
  const rounds = Number(option(argv, '--rounds') ?? 7);
  const compare = option(argv, '--compare');
  const builds = [load('dist', DIST)];
  if (compare) builds.push(load(compare, path.resolve(compare)));
  for (const b of builds) {
    time(b.metrics, b.message, calls); // warm-up: JIT
    time(b.span, b.message, calls);
  }
  for (let r = 0; r < rounds; r++) {
    // Each round in another order, so that neither build always runs after the other.
    for (let i = 0; i < builds.length; i++) {
      const b = builds[(i + r) % builds.length]!;
      b.micros.metrics.push(time(b.metrics, b.message, calls));
      b.micros.span.push(time(b.span, b.message, calls));
    }
  }
  console.log(`${rounds} rounds of ${calls.toLocaleString('en-US')} simulated unary calls`);
  for (const b of builds) {
    for (const kind of ['metrics', 'span'] as const) {
      const each = b.micros[kind].map((m) => m.toFixed(2)).join(' ');
      console.log(`${b.name} ${kind}: ${median(b.micros[kind]).toFixed(2)} µs per call [${each}]`);
    }
  }
}

main();
