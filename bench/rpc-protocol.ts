// The messages between the bench and an RPC client process (bench/rpc-child.ts). The RPC
// workloads send real RPCs to real grpc-js backends: through our `xds:` plugin, through
// @grpc/grpc-js-xds's, or through plain grpc-js (the floor). The two plugins both register the
// `xds` scheme in grpc-js's process-wide registry, so each process loads at most one of them.
import { performance } from 'node:perf_hooks';
import type { Impl } from './protocol';

/** The unary method every backend serves: it answers with its own name (`s<set>-<index>`). */
export const ECHO_METHOD = '/bench.Echo/Echo';

/** The `xds:///` target's name: the Listener (and, through it, route and cluster) served. */
export const XDS_SERVICE = 'bench-rpc';

/** The name a backend answers with: which set it belongs to, and which one of the set. */
export const backendName = (set: number, index: number): string => `s${set}-${index}`;

/**
 * A clock the bench and its client processes share (milliseconds since the epoch, sub-ms
 * resolution): a push is timed from the bench's clock to the client's. Measured between two
 * processes on the bench machine, the two agree to about 0.2 ms.
 */
export const absoluteNow = (): number => performance.timeOrigin + performance.now();

/** How a channel is made: the target, and where its bootstrap or addresses come from. */
export type ChannelSpec =
  /**
   * `xds:///<service>`, `xds:///bench-rpc` without one. `bootstrap` (JSON text) goes in the
   * channel option: ours' BOOTSTRAP_OPTION, the peer's per-channel test option. Without it, the
   * peer reads GRPC_XDS_BOOTSTRAP_CONFIG, set when its process was started.
   */
  | { readonly kind: 'xds'; readonly bootstrap?: string; readonly service?: string }
  /** The floor: `ipv4:` with round_robin, or the bench's own resolver when it is pushed to. */
  | { readonly kind: 'ipv4' | 'pushed'; readonly addresses: readonly string[] };

/** Opens the channel, waits for it to be ready, and sends `warmup` RPCs (`concurrency` in flight). */
export interface OpenCommand {
  readonly cmd: 'open';
  readonly channel: ChannelSpec;
  readonly warmup: number;
  readonly concurrency: number;
  /**
   * Stateful session affinity (gRFC A55): every RPC after the first sends back, as a `cookie`
   * header, the session cookie the first RPC's response set, as a client keeping a session does.
   */
  readonly session?: boolean;
  /**
   * Per-call telemetry (issue 22): the channel is made after `register()` with the OpenTelemetry
   * SDK's MeterProvider (A66's metrics, aggregated in memory) or TracerProvider (A72's spans,
   * sampled and ended, exported nowhere). Ours only.
   */
  readonly telemetry?: 'metrics' | 'traces';
  /**
   * With `telemetry`: false has the hooks run and the records go nowhere (OpenTelemetry API's
   * no-op meter or tracer), bench/telemetry-cost.ts. Default true.
   */
  readonly recorded?: boolean;
}

/** One timed batch of `rpcs` RPCs on the open channel, `concurrency` in flight (`batch`). */
export interface BatchCommand {
  readonly cmd: 'batch';
  readonly rpcs: number;
  readonly concurrency: number;
}

/**
 * Channel creation → first answered RPC: `cold` first (the process's first channel), then
 * `warmups` channels, each closed after its first RPC, then `warm` (new backends, a new
 * management server: nothing of it is cached or connected).
 */
export interface FirstRpcCommand {
  readonly cmd: 'first';
  readonly cold: ChannelSpec;
  readonly warmups: readonly ChannelSpec[];
  readonly warm: ChannelSpec;
}

/**
 * The telemetry of `rpcs` unary RPCs made without RPCs (bench/telemetry-cost.ts), in a client
 * whose channel was opened with `kind`'s telemetry.
 */
export interface TelemetryAloneCommand {
  readonly cmd: 'telemetry-alone';
  readonly kind: 'metrics' | 'traces';
  readonly rpcs: number;
}

/**
 * Heap per channel (memory-channels): `warmup` is opened, made ready by one wait-for-ready RPC
 * and closed (code loaded); every channel of `held` likewise, one after another, but kept open
 * until the end (the shared xDS client, its stream and the code the channels run, compiled and
 * optimized, are then in the baseline); heap after forced GCs; every channel of `channels`
 * opened and made ready the same way; heap after forced GCs; all closed. With `snapshots`, a
 * heap snapshot at both points, `<snapshots>-baseline` and `<snapshots>-open`
 * (`.heapsnapshot`).
 */
export interface ChannelHeapCommand {
  readonly cmd: 'channel-heap';
  readonly warmup: ChannelSpec;
  readonly held: readonly ChannelSpec[];
  readonly channels: readonly ChannelSpec[];
  readonly snapshots?: string;
}

/** Opens a channel and keeps one RPC in flight, back to back, until `push-stop`. */
export interface PushStartCommand {
  readonly cmd: 'push-start';
  readonly channel: ChannelSpec;
  /** Answers from this backend set count as "traffic is there" (the answer is `ready`). */
  readonly set: number;
}

/** The next push moves traffic to this set: report the first answer from it (`moved`). */
export interface PushExpectCommand {
  readonly cmd: 'push-expect';
  readonly set: number;
}

/** The floor's push: its resolver reports these addresses. */
export interface ResolveCommand {
  readonly cmd: 'resolve';
  readonly addresses: readonly string[];
}

export interface PushStopCommand {
  readonly cmd: 'push-stop';
}

export interface RpcExitCommand {
  readonly cmd: 'exit';
}

export type RpcCommand =
  | OpenCommand
  | BatchCommand
  | FirstRpcCommand
  | TelemetryAloneCommand
  | ChannelHeapCommand
  | PushStartCommand
  | PushExpectCommand
  | ResolveCommand
  | PushStopCommand
  | RpcExitCommand;

export type RpcEvent =
  | { readonly ev: 'ready' }
  /**
   * A batch's duration, the client process's CPU time (user + system) in it, and how many
   * answers each backend gave so far (warm-up included).
   */
  | {
      readonly ev: 'batch';
      readonly ms: number;
      readonly cpuMs: number;
      readonly answers: Readonly<Record<string, number>>;
    }
  | { readonly ev: 'first'; readonly coldMs: number; readonly warmMs: number }
  /** CPU milliseconds of the telemetry alone: the SDK's calls, and our tracers on the SDK. */
  | { readonly ev: 'telemetry-alone'; readonly sdkCpuMs: number; readonly tracersCpuMs: number }
  /**
   * Heap used after forced GCs with the held channels open (`baselineBytes`), and with the
   * channels open too (`openBytes`); the same for array buffers (outside the heap).
   */
  | {
      readonly ev: 'channel-heap';
      readonly baselineBytes: number;
      readonly openBytes: number;
      readonly baselineArrayBuffers: number;
      readonly openArrayBuffers: number;
    }
  /** The first answer from the expected set, on the shared clock (`absoluteNow`). */
  | { readonly ev: 'moved'; readonly at: number }
  | { readonly ev: 'error'; readonly message: string };

export type RpcEventOf<E extends RpcEvent['ev']> = Extract<RpcEvent, { ev: E }>;

export type { Impl };
