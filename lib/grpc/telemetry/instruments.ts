// gRFC A66's per-call instruments, with its names, units, descriptions and bucket boundaries
// (given as advice, so an SDK uses them without a View). One set per MeterProvider.
import type { Counter, Histogram, Meter, MeterProvider, ValueType } from '@opentelemetry/api';
import { VERSION } from '../../version';

/** A66's latency buckets, in seconds. */
export const LATENCY_BUCKETS: readonly number[] = [
  0, 0.00001, 0.00005, 0.0001, 0.0003, 0.0006, 0.0008, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006,
  0.008, 0.01, 0.013, 0.016, 0.02, 0.025, 0.03, 0.04, 0.05, 0.065, 0.08, 0.1, 0.13, 0.16, 0.2, 0.25,
  0.3, 0.4, 0.5, 0.65, 0.8, 1, 2, 5, 10, 20, 50, 100,
];

/** A66's size buckets, in bytes. */
export const SIZE_BUCKETS: readonly number[] = [
  0, 1024, 2048, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456,
  1073741824, 4294967296,
];

/** Seconds since `start`, a performance.now() reading: the durations' unit, client and server alike. */
export function secondsSince(start: number): number {
  return (performance.now() - start) / 1000;
}

/** ValueType.INT / DOUBLE, without loading @opentelemetry/api for its enum. */
const INT = 0 as ValueType;
const DOUBLE = 1 as ValueType;

/** The meter of every per-call instrument: A66 asks for the library's name and version. */
export function meterOf(provider: MeterProvider): Meter {
  return provider.getMeter('xds-client', VERSION);
}

export interface ClientCallInstruments {
  readonly attemptStarted: Counter;
  readonly attemptDuration: Histogram;
  readonly attemptSentSize: Histogram;
  readonly attemptRcvdSize: Histogram;
  readonly callDuration: Histogram;
}

export interface ServerCallInstruments {
  readonly callStarted: Counter;
  readonly callSentSize: Histogram;
  readonly callRcvdSize: Histogram;
  readonly callDuration: Histogram;
}

const clientByProvider = new WeakMap<MeterProvider, ClientCallInstruments>();
const serverByProvider = new WeakMap<MeterProvider, ServerCallInstruments>();

export function clientCallInstruments(provider: MeterProvider): ClientCallInstruments {
  let made = clientByProvider.get(provider);
  if (made) return made;
  const meter = meterOf(provider);
  made = {
    attemptStarted: meter.createCounter('grpc.client.attempt.started', {
      description: 'Number of client call attempts started.',
      unit: '{attempt}',
      valueType: INT,
    }),
    attemptDuration: latency(
      meter,
      'grpc.client.attempt.duration',
      'End-to-end time taken to complete a client call attempt, the pick included.',
    ),
    attemptSentSize: size(
      meter,
      'grpc.client.attempt.sent_total_compressed_message_size',
      'Compressed message bytes sent per client call attempt.',
    ),
    attemptRcvdSize: size(
      meter,
      'grpc.client.attempt.rcvd_total_compressed_message_size',
      'Compressed message bytes received per call attempt.',
    ),
    callDuration: latency(
      meter,
      'grpc.client.call.duration',
      'Time taken by gRPC to complete an RPC from the application’s perspective.',
    ),
  };
  clientByProvider.set(provider, made);
  return made;
}

export function serverCallInstruments(provider: MeterProvider): ServerCallInstruments {
  let made = serverByProvider.get(provider);
  if (made) return made;
  const meter = meterOf(provider);
  made = {
    callStarted: meter.createCounter('grpc.server.call.started', {
      description: 'Number of server calls started.',
      unit: '{call}',
      valueType: INT,
    }),
    callSentSize: size(
      meter,
      'grpc.server.call.sent_total_compressed_message_size',
      'Compressed message bytes sent per server call.',
    ),
    callRcvdSize: size(
      meter,
      'grpc.server.call.rcvd_total_compressed_message_size',
      'Compressed message bytes received per server call.',
    ),
    callDuration: latency(
      meter,
      'grpc.server.call.duration',
      'Time from the server transport receiving a call’s headers to its status being sent.',
    ),
  };
  serverByProvider.set(provider, made);
  return made;
}

function latency(meter: Meter, name: string, description: string): Histogram {
  return meter.createHistogram(name, {
    description,
    unit: 's',
    valueType: DOUBLE,
    advice: { explicitBucketBoundaries: [...LATENCY_BUCKETS] },
  });
}

function size(meter: Meter, name: string, description: string): Histogram {
  return meter.createHistogram(name, {
    description,
    unit: 'By',
    valueType: INT,
    advice: { explicitBucketBoundaries: [...SIZE_BUCKETS] },
  });
}
