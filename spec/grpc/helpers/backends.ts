// Test harness for specs that send real RPCs: grpc-js backends on 127.0.0.1 that answer with
// their own name, a client helper that counts where RPCs landed, a resolver the spec controls,
// and leak checks for what a closed channel leaves behind. Every wait is bounded.
//
//   const [a, b] = await startBackends(['a', 'b']);
//   const resolver = manualResolver('my-spec-scheme');        // one scheme per spec file
//   resolver.set('t', [a.endpoint(['p0']), b.endpoint(['p1'])], { 'xds_client.priority': … });
//   const client = newClient(resolver.target('t'));
//   const counts = await sendRpcs(client, 100);                // Map { 'a' => 100 }
//   client.close(); await closeAll();
//
// Backends: `behaviour` makes one answer (default), hang (never answer: the RPC's deadline ends
// it), fail with a status, or fail its next `times` RPCs with a status and then answer;
// `stop()` then `start()` brings it back on the same port. Started with `{ metrics: true }`, a
// backend sends each RPC's ORCA load report (`loadReport`) in its trailers, as weighted round
// robin (gRFC A58) reads them.

import { createHook } from 'node:async_hooks';
import * as net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { EVENT_DEADLINE_MS } from '../../helpers/constants';
import { until, waitFor } from '../../helpers/wait';
// Internal on purpose: the LB unit specs' manual resolver gives endpoints a hierarchy path.
import { withPath, type PathedEndpoint } from '../../../lib/grpc/lb/common/hierarchy';

/** The one method every backend serves. */
export const ECHO_PATH = '/test.Echo/Echo';

/**
 * What a backend does with an RPC. With `times`, only the first `times` RPCs after this
 * behaviour is set fail; the later ones are answered.
 */
export type Behaviour =
  | 'answer'
  | 'hang'
  | { readonly code: grpc.status; readonly details?: string; readonly times?: number };

/** ORCA figures a backend reports with each RPC (it must be started with `metrics: true`). */
export interface LoadReport {
  readonly qps?: number;
  readonly eps?: number;
  readonly applicationUtilization?: number;
  readonly cpuUtilization?: number;
  readonly memUtilization?: number;
  /** ORCA `named_metrics`. */
  readonly named?: Readonly<Record<string, number>>;
}

export interface BackendOptions {
  /** Send per-call ORCA load reports (`grpc.server_call_metric_recording`). */
  readonly metrics?: boolean;
}

export interface Backend {
  readonly name: string;
  /** Chosen at the first start, kept across stop() and start(). */
  readonly port: number;
  /** `127.0.0.1:<port>` */
  readonly address: string;
  readonly running: boolean;
  behaviour: Behaviour;
  /** What the backend reports with each RPC, when started with `metrics: true`. */
  loadReport: LoadReport | undefined;
  /** RPCs that reached this backend (answered, hanging or failed) since it was created. */
  readonly rpcs: number;
  /** The client addresses (`ip:port`) its RPCs came from: one per client connection. */
  readonly peers: ReadonlySet<string>;
  /** This backend's address as an endpoint under `path` (gRFC A56 hierarchical addresses). */
  endpoint(path?: readonly string[]): PathedEndpoint;
  /** Stops listening and drops every connection and call. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
}

const BIND_DEADLINE_MS = 2000;
const DEFAULT_RPC_DEADLINE_MS = 2000;

const identity = (b: Buffer) => b;

/** A unary method of the test service at `path`: bytes in, a string (a backend's name) out. */
export function unaryMethod(path: string): grpc.MethodDefinition<Buffer, string> {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: (name: string) => Buffer.from(name),
    responseDeserialize: (b: Buffer) => b.toString(),
  };
}

const ECHO_SERVICE: grpc.ServiceDefinition = { Echo: unaryMethod(ECHO_PATH) };

/** Everything this module started and has not stopped: closeAll() stops it. */
const live = new Set<{ stop(): Promise<void> }>();

class EchoBackend implements Backend {
  behaviour: Behaviour = 'answer';
  loadReport: LoadReport | undefined;
  rpcs = 0;
  /** RPCs failed under each `times` behaviour (keyed by the object the spec set). */
  private readonly failed = new WeakMap<object, number>();
  readonly peers = new Set<string>();
  port = 0;
  private server: grpc.Server | null = null;

  constructor(
    readonly name: string,
    private readonly options: BackendOptions = {},
  ) {}

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.server !== null;
  }

  endpoint(path: readonly string[] = []): PathedEndpoint {
    return withPath({ addresses: [{ host: '127.0.0.1', port: this.port }] }, path);
  }

  async start(): Promise<void> {
    if (this.server) return;
    const server = new grpc.Server(
      this.options.metrics ? { 'grpc.server_call_metric_recording': 1 } : {},
    );
    server.addService(ECHO_SERVICE, {
      Echo: (call: grpc.ServerUnaryCall<Buffer, string>, callback: grpc.sendUnaryData<string>) => {
        this.rpcs++;
        this.peers.add(call.getPeer());
        if (this.loadReport) recordLoad(call.getMetricsRecorder(), this.loadReport);
        const behaviour = this.behaviour;
        if (behaviour === 'hang') return;
        if (behaviour === 'answer') return callback(null, this.name);
        if (behaviour.times !== undefined) {
          const failed = this.failed.get(behaviour) ?? 0;
          if (failed >= behaviour.times) return callback(null, this.name);
          this.failed.set(behaviour, failed + 1);
        }
        callback({ code: behaviour.code, details: behaviour.details ?? `${this.name} fails` });
      },
    });
    this.port = await bindWithRetry(server, this.port);
    this.server = server;
    live.add(this);
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    live.delete(this);
    // tryShutdown's callback comes once the listener is closed (the port can be bound again);
    // forceShutdown right after ends the connections and hanging calls it would wait for.
    await bounded(
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        server.forceShutdown();
      }),
      BIND_DEADLINE_MS,
      `stopping backend ${this.name}`,
    );
  }
}

/** Binds 127.0.0.1:`port` (0: any free port); a port just released may need a moment. */
async function bindWithRetry(server: grpc.Server, port: number): Promise<number> {
  const deadline = Date.now() + BIND_DEADLINE_MS;
  for (;;) {
    try {
      return await new Promise<number>((resolve, reject) =>
        server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (e, p) =>
          e ? reject(e) : resolve(p),
        ),
      );
    } catch (e) {
      if (Date.now() >= deadline) throw e;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

function recordLoad(
  recorder: ReturnType<grpc.ServerUnaryCall<Buffer, string>['getMetricsRecorder']>,
  report: LoadReport,
): void {
  if (report.qps !== undefined) recorder.recordQpsMetric(report.qps);
  if (report.eps !== undefined) recorder.recordEpsMetric(report.eps);
  if (report.applicationUtilization !== undefined) {
    recorder.recordApplicationUtilizationMetric(report.applicationUtilization);
  }
  if (report.cpuUtilization !== undefined) {
    recorder.recordCPUUtilizationMetric(report.cpuUtilization);
  }
  if (report.memUtilization !== undefined) {
    recorder.recordMemoryUtilizationMetric(report.memUtilization);
  }
  for (const [name, value] of Object.entries(report.named ?? {})) {
    recorder.recordNamedMetric(name, value);
  }
}

/** A backend named `name`, started. */
export async function startBackend(name: string, options: BackendOptions = {}): Promise<Backend> {
  const backend = new EchoBackend(name, options);
  await backend.start();
  return backend;
}

/** One started backend per name, in order. */
export function startBackends(
  names: readonly string[],
  options: BackendOptions = {},
): Promise<Backend[]> {
  return Promise.all(names.map((name) => startBackend(name, options)));
}

/**
 * A TCP server on 127.0.0.1 that accepts connections and never speaks HTTP/2: a channel to it
 * stays CONNECTING (until grpc-js's 20 s connect timeout), which is how a priority that hangs
 * while connecting looks.
 */
export async function startSilentServer(): Promise<{
  readonly port: number;
  endpoint(path?: readonly string[]): PathedEndpoint;
  stop(): Promise<void>;
}> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  const handle = {
    port,
    endpoint: (path: readonly string[] = []) =>
      withPath({ addresses: [{ host: '127.0.0.1', port }] }, path),
    stop: async () => {
      live.delete(handle);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  live.add(handle);
  return handle;
}

/** Stops every backend and silent server this module started that is still running. */
export async function closeAll(): Promise<void> {
  await Promise.all([...live].map((s) => s.stop()));
}

/**
 * A grpc-js client for `target`. Its own subchannel pool, so that specs sharing backends do
 * not share connections, and a short reconnect backoff, so that a backend brought back is
 * used within a fraction of a second. `options` are added on top. Insecure unless `credentials`.
 */
export function newClient(
  target: string,
  options: grpc.ChannelOptions = {},
  credentials = grpc.credentials.createInsecure(),
): grpc.Client {
  return new grpc.Client(target, credentials, {
    'grpc.use_local_subchannel_pool': 1,
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 200,
    ...options,
  });
}

export interface RpcOptions {
  /** Per RPC (default 2 s). */
  deadlineMs?: number;
  waitForReady?: boolean;
  metadata?: grpc.Metadata;
}

/** One RPC: the name of the backend that answered, or a rejection with the ServiceError. */
export function sendRpc(client: grpc.Client, options: RpcOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest<Buffer, string>(
      ECHO_PATH,
      identity,
      (b: Buffer) => b.toString(),
      Buffer.alloc(0),
      options.metadata ?? new grpc.Metadata(),
      {
        deadline: Date.now() + (options.deadlineMs ?? DEFAULT_RPC_DEADLINE_MS),
        ...(options.waitForReady ? { waitForReady: true } : {}),
      },
      (error, name) => (error ? reject(error) : resolve(name!)),
    );
  });
}

/** The key under which sendRpcs counts RPCs that failed with `code`, e.g. 'failed:UNAVAILABLE'. */
export function failedKey(code: grpc.status): string {
  return `failed:${grpc.status[code]}`;
}

/**
 * Sends `n` RPCs, `concurrency` at a time (default 10), and counts them by the backend that
 * answered; failed RPCs are counted under failedKey(code).
 */
export async function sendRpcs(
  client: grpc.Client,
  n: number,
  options: RpcOptions & { concurrency?: number } = {},
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const count = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  let started = 0;
  const worker = async () => {
    while (started < n) {
      started++;
      try {
        count(await sendRpc(client, options));
      } catch (e) {
        count(failedKey((e as grpc.ServiceError).code ?? grpc.status.UNKNOWN));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 10, n) }, worker));
  return counts;
}

/**
 * Runs `probe` until it returns true (it may send RPCs), failing after `timeoutMs` with `what`.
 * The specs' one polling loop (spec/helpers/wait.ts), under the name the gRPC specs use.
 */
export const waitUntil = until;

async function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

// ---- A resolver the spec controls ----

export interface ManualResolver {
  /** `<scheme>:///<name>` */
  target(name: string): string;
  /**
   * What resolvers of `name` return: these endpoints and a service config with this one LB
   * config (e.g. `{ 'xds_client.priority': {...} }`). Live resolvers of `name` report it at once.
   */
  set(name: string, endpoints: readonly PathedEndpoint[], lbConfig: object): void;
  /** Calls of updateResolution() on resolvers of `name`: the first, then re-resolution requests. */
  resolutionRequests(name: string): number;
}

/**
 * Registers `scheme` in grpc-js with a resolver that reports what set() gave, once when asked
 * first and then on every set(); later updateResolution() calls (re-resolution) are counted.
 */
export function manualResolver(scheme: string): ManualResolver {
  const results = new Map<string, { endpoints: PathedEndpoint[]; lbConfig: object }>();
  const requests = new Map<string, number>();
  const resolvers = new Set<ManualResolverImpl>();

  class ManualResolverImpl implements grpc.experimental.Resolver {
    private reported = false;
    constructor(
      readonly target: grpc.experimental.GrpcUri,
      private readonly listener: grpc.experimental.ResolverListener,
    ) {}
    static getDefaultAuthority(target: grpc.experimental.GrpcUri): string {
      return target.path;
    }
    updateResolution(): void {
      resolvers.add(this);
      requests.set(this.target.path, (requests.get(this.target.path) ?? 0) + 1);
      if (this.reported) return;
      this.reported = true;
      process.nextTick(() => this.report());
    }
    report(): void {
      const result = results.get(this.target.path);
      if (!resolvers.has(this)) return;
      if (!result) {
        const details = `manual resolver: nothing set for ${this.target.path}`;
        this.listener(
          grpc.experimental.statusOrFromError({ code: grpc.status.UNAVAILABLE, details }),
          {},
          null,
          '',
        );
        return;
      }
      const serviceConfig = { methodConfig: [], loadBalancingConfig: [result.lbConfig] };
      this.listener(
        grpc.experimental.statusOrFromValue(result.endpoints),
        {},
        grpc.experimental.statusOrFromValue(serviceConfig as grpc.ServiceConfig),
        '',
      );
    }
    destroy(): void {
      resolvers.delete(this);
      this.reported = false;
    }
  }

  grpc.experimental.registerResolver(scheme, ManualResolverImpl);
  return {
    target: (name) => `${scheme}:///${name}`,
    set(name, endpoints, lbConfig) {
      results.set(name, { endpoints: [...endpoints], lbConfig });
      for (const resolver of resolvers) {
        if (resolver.target.path === name) resolver.report();
      }
    },
    resolutionRequests: (name) => requests.get(name) ?? 0,
  };
}

// ---- Leak checks ----

/**
 * Waits until the process holds no more active resources (sockets, servers, ref'd timers, as
 * process.getActiveResourcesInfo() lists them) of any kind than `baseline` did: what a closed
 * channel leaves must drain by itself. Fails with both lists.
 */
export async function waitForResourcesBack(
  baseline: readonly string[],
  timeoutMs = EVENT_DEADLINE_MS,
): Promise<void> {
  const tally = (list: readonly string[]) => {
    const m = new Map<string, number>();
    for (const r of list) m.set(r, (m.get(r) ?? 0) + 1);
    return m;
  };
  const base = tally(baseline);
  let now: string[] = [];
  await waitFor(
    () =>
      `resources still active after ${timeoutMs} ms: ${JSON.stringify(now)}, before: ${JSON.stringify(baseline)}`,
    () => {
      now = process.getActiveResourcesInfo();
      const extra = [...tally(now)].filter(([kind, n]) => n > (base.get(kind) ?? 0));
      return extra.length === 0 ? true : undefined;
    },
    timeoutMs,
  );
}

export interface TrackedTimer {
  /** Where it was created. */
  readonly stack: string;
  /** Whether it would keep the process alive. */
  hasRef(): boolean;
}

/**
 * Records every timer created from now on whose creation stack matches `from` (for example
 * /lib[\\/]grpc[\\/]lb[\\/]/), until stop(). `pending()` lists those neither fired nor cleared
 * — unref'd ones included, which process.getActiveResourcesInfo() does not show. (A timer that
 * fired or was cleared is known at once by Node's own `_destroyed` mark on it.)
 */
export function trackTimers(from: RegExp): { pending(): TrackedTimer[]; stop(): void } {
  const timers = new Map<number, TrackedTimer & { done(): boolean }>();
  const hook = createHook({
    init(asyncId, type, _trigger, resource) {
      if (type !== 'Timeout') return;
      const stack = new Error().stack ?? '';
      if (!from.test(stack)) return;
      const timer = resource as NodeJS.Timeout & { _destroyed?: boolean };
      timers.set(asyncId, { stack, hasRef: () => timer.hasRef(), done: () => !!timer._destroyed });
    },
    destroy(asyncId) {
      timers.delete(asyncId);
    },
  });
  hook.enable();
  return {
    pending: () =>
      [...timers.values()].filter((t) => !t.done()).map(({ stack, hasRef }) => ({ stack, hasRef })),
    stop: () => hook.disable(),
  };
}
