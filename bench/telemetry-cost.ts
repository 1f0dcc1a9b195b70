// Per-call telemetry in the bench's RPC clients (issue 22): the OpenTelemetry SDK providers a
// service would register, and what the telemetry costs without any RPC, so that a run can say
// how much of telemetry's cost per RPC is the SDK's own and how much is the library's:
//   sdk      the SDK calls one unary RPC's telemetry makes, and nothing else: for metrics one
//            counter add and four histogram records with constant label sets; for traces the
//            call and attempt spans, the attempt's context injected, two message events, two
//            statuses and ends;
//   tracers  the library's own tracers (what its hooks call per unary RPC), on the same
//            providers: the SDK's calls plus the library's objects, without grpc-js.
// Both run in the client process that measured the RPCs, on the same providers, so the JIT and
// the heap are the ones the RPCs saw.
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { builtModule, DIST } from './clients';
import { ECHO_METHOD, XDS_SERVICE } from './rpc-protocol';
import { telemetryOptions } from './telemetry-sdk';

export type TelemetryKind = 'metrics' | 'traces';

/** The CPU milliseconds of `rpcs` unary RPCs' telemetry, made without RPCs. */
export interface TelemetryAlone {
  readonly sdkCpuMs: number;
  readonly tracersCpuMs: number;
}

const grpcEntry = () =>
  require(path.join(DIST, 'grpc', 'index.js')) as typeof import('../lib/grpc');
const internal = <T>(file: string): T => builtModule<T>(`grpc/telemetry/${file}`);

/** The providers register() was last given here (one kind a process). */
let providers: { meterProvider?: MeterProvider; tracerProvider?: TracerProvider } = {};

/**
 * register()s `kind`'s SDK provider, as a service would have it: the MeterProvider with a reader
 * (without one, the SDK drops every record) that is never collected; the TracerProvider with a
 * batch processor whose exporter discards the spans.
 *
 * Not `recorded`: the library's hooks and tracers run for every RPC, but what they record goes
 * nowhere, so what is left is the library's own cost: OpenTelemetry API's no-op meter, or its
 * no-op tracer (a ProxyTracerProvider with no delegate: spans that record nothing, no ids).
 */
export function registerTelemetry(kind: TelemetryKind, recorded = true): void {
  if (!recorded) {
    const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
    const meter = api.createNoopMeter();
    providers =
      kind === 'metrics'
        ? { meterProvider: { getMeter: () => meter } }
        : { tracerProvider: new api.ProxyTracerProvider() };
  } else {
    providers = telemetryOptions(kind);
  }
  grpcEntry().register(providers);
}

/** RPCs in flight in the bench's batches: the telemetry alone runs in chunks of as many. */
const CHUNK = 100;

/**
 * The CPU milliseconds of `work` done for `rpcs` RPCs, a chunk at a time with the event loop
 * turning in between, as RPCs let it: the span processor's exports run there, as they do
 * beside RPCs (all at once, its queue would fill and drop spans, which costs less).
 */
async function cpuMsOf(work: (rpcs: number) => void, rpcs: number): Promise<number> {
  const before = process.cpuUsage();
  for (let done = 0; done < rpcs; done += CHUNK) {
    work(Math.min(CHUNK, rpcs - done));
    await new Promise((resolve) => setImmediate(resolve));
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** The SDK calls of `rpcs` unary RPCs' metrics (A66's five records). */
function sdkMetrics(provider: MeterProvider, rpcs: number): void {
  const { clientCallInstruments } =
    internal<typeof import('../lib/grpc/telemetry/instruments')>('instruments.js');
  const instruments = clientCallInstruments(provider);
  const method = ECHO_METHOD.slice(1);
  const target = `xds:///${XDS_SERVICE}`;
  const started = { 'grpc.method': method, 'grpc.target': target };
  const ended = { ...started, 'grpc.status': 'OK' };
  for (let i = 0; i < rpcs; i++) {
    const start = performance.now();
    instruments.attemptStarted.add(1, started);
    const seconds = (performance.now() - start) / 1000;
    instruments.attemptDuration.record(seconds, ended);
    instruments.attemptSentSize.record(4, ended);
    instruments.attemptRcvdSize.record(4, ended);
    instruments.callDuration.record(seconds, ended);
  }
}

/** The SDK calls of `rpcs` unary RPCs' spans (A72's call and attempt spans and events). */
function sdkTraces(provider: TracerProvider, rpcs: number): void {
  const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const tracer = provider.getTracer('xds-client');
  const setter = {
    set: (carrier: grpc.Metadata, key: string, value: string) => carrier.set(key, value),
  };
  const ok = { code: api.SpanStatusCode.OK };
  for (let i = 0; i < rpcs; i++) {
    const parent = api.context.active();
    const call = tracer.startSpan('Sent.bench.Echo', { startTime: performance.now() }, parent);
    const callContext = api.trace.setSpan(parent, call);
    const attributes = { 'previous-rpc-attempts': 0, 'transparent-retry': false };
    const attempt = tracer.startSpan('Attempt.bench.Echo', { attributes }, callContext);
    const metadata = new grpc.Metadata();
    api.propagation.inject(api.trace.setSpan(callContext, attempt), metadata, setter);
    attempt.addEvent('Outbound message', { 'sequence-number': 0, 'message-size': 4 });
    attempt.addEvent('Inbound message', { 'sequence-number': 0, 'message-size': 4 });
    attempt.setStatus(ok);
    attempt.end();
    call.setStatus(ok);
    call.end();
  }
}

/** What the library's hooks call on a channel's tracers for unary RPCs that end OK. */
function tracersOf(): (rpcs: number) => void {
  const { channelTelemetryNow } =
    internal<typeof import('../lib/grpc/telemetry/channel-telemetry')>('channel-telemetry.js');
  const telemetry = channelTelemetryNow(`xds:///${XDS_SERVICE}`);
  if (!telemetry) throw new Error('telemetry alone: register() was given no provider');
  const backend = { backendService: 'cluster', locality: '', delayed: false };
  const options = { previousAttempts: 0, transparentRetry: false, backend };
  return (rpcs) => {
    for (let i = 0; i < rpcs; i++) {
      const call = telemetry.startCall(ECHO_METHOD);
      const attempt = call.startAttempt(options);
      attempt.sendingMetadata(new grpc.Metadata());
      attempt.picked();
      attempt.sentMessage(4, false);
      attempt.receivedMessage(4, false);
      attempt.end(grpc.status.OK, 'OK');
      call.end(grpc.status.OK, 'OK');
    }
  };
}

/** `rpcs` unary RPCs' telemetry without the RPCs: the SDK's calls alone, then our tracers'. */
export async function telemetryAlone(kind: TelemetryKind, rpcs: number): Promise<TelemetryAlone> {
  const { meterProvider, tracerProvider } = providers;
  const sdk =
    kind === 'metrics'
      ? (count: number) => sdkMetrics(meterProvider!, count)
      : (count: number) => sdkTraces(tracerProvider!, count);
  // A round of each first, as the RPCs had their warm-up.
  await cpuMsOf(sdk, rpcs);
  const tracers = tracersOf();
  await cpuMsOf(tracers, rpcs);
  return { sdkCpuMs: await cpuMsOf(sdk, rpcs), tracersCpuMs: await cpuMsOf(tracers, rpcs) };
}
