// The workloads. Each sample starts a fresh client process (bench/child.ts), lets it subscribe
// while the server holds its responses, then releases one pre-encoded response and times it:
// end to end at the server (release -> last watcher called, release -> ACK received) and inside
// the client (response bytes in -> last watcher called). Receivers take turns within each
// repetition, so drift on the machine spreads over all three.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { DIST, ROOT } from './clients';
import {
  SEED,
  aggregateTree,
  cluster,
  clusters,
  fingerprint,
  loadAssignments,
  totalBytes,
  type Fixture,
} from './fixtures';
import { ClientProcess, type BenchServer, type Delivery } from './harness';
import type { Impl, ResourceKind } from './protocol';
import { deltaSuite } from './delta';
import { rpcConfig, rpcSuite, type RpcConfig } from './rpc';
import { median, type Results } from './stats';

export interface Config {
  /** Client processes per receiver for each workload (each gives one cold sample). */
  readonly sessions: number;
  /** Re-sends and single-cluster changes per CDS session. */
  readonly updatesPerSession: number;
  readonly smallClusters: number;
  readonly largeClusters: number;
  readonly assignments: number;
  readonly endpointsPerAssignment: number;
  readonly memoryClusters: number;
  readonly watchersPerCluster: number;
  readonly treeClusters: number;
  readonly importSamples: number;
  /** Responses the warm-up client gets before a timed sample (plus one unchanged re-send). */
  readonly warmupRounds: number;
  /** The EDS warm-up client's assignments (CDS warms up with as many clusters as it times). */
  readonly warmupAssignments: number;
  /** The one warm-up response before a service's second response: clusters / assignments. */
  readonly secondWarmupClusters: number;
  readonly secondWarmupAssignments: number;
  /** The scale workloads (only with --filter): cluster counts, assignment counts, samples. */
  readonly scaleClusters: readonly number[];
  readonly scaleAssignments: readonly number[];
  readonly scaleSessions: number;
  /** The RPC workloads' sizes (bench/rpc.ts). */
  readonly rpc: RpcConfig;
}

export function config(quick: boolean): Config {
  return quick
    ? {
        sessions: 2,
        updatesPerSession: 2,
        smallClusters: 1_000,
        largeClusters: 2_000,
        assignments: 200,
        endpointsPerAssignment: 100,
        memoryClusters: 2_000,
        watchersPerCluster: 10,
        treeClusters: 200,
        importSamples: 3,
        warmupRounds: 3,
        warmupAssignments: 100,
        secondWarmupClusters: 100,
        secondWarmupAssignments: 10,
        scaleClusters: [1_000, 10_000, 30_000, 100_000],
        scaleAssignments: [1_000, 3_000, 10_000],
        scaleSessions: 1,
        rpc: rpcConfig(true),
      }
    : {
        sessions: 5,
        updatesPerSession: 3,
        smallClusters: 1_000,
        largeClusters: 10_000,
        assignments: 1_000,
        endpointsPerAssignment: 100,
        memoryClusters: 10_000,
        watchersPerCluster: 10,
        treeClusters: 200,
        importSamples: 7,
        warmupRounds: 4,
        warmupAssignments: 300,
        secondWarmupClusters: 500,
        secondWarmupAssignments: 50,
        scaleClusters: [1_000, 10_000, 30_000, 100_000],
        scaleAssignments: [1_000, 3_000, 10_000],
        scaleSessions: 3,
        rpc: rpcConfig(false),
      };
}

export interface Context {
  readonly config: Config;
  readonly bench: BenchServer;
  readonly results: Results;
  /** Lines printed under the table (identity checks, derived figures). */
  readonly notes: string[];
  progress(line: string): void;
}

export interface Workload {
  readonly id: string;
  readonly description: string;
  /** Slow: measured only when a --filter selects it, never in the default or --quick run. */
  readonly optIn?: boolean;
}

export interface Suite {
  /** The workload ids it measures, for --filter and --list, with what each is. */
  readonly workloads: readonly Workload[];
  run(ctx: Context, wanted: (id: string) => boolean): Promise<void>;
}

const RECEIVERS: readonly Impl[] = ['ours', 'peer', 'floor'];

export const n = (value: number): string => value.toLocaleString('en-US');
const MB = (bytes: number): number => bytes / (1024 * 1024);

let sequence = 0;

interface Session {
  readonly client: ClientProcess;
  /** One held response released and timed; `deliveries` counts watcher calls. */
  deliver(deliveries: number, change?: () => void): Promise<Delivery>;
}

interface Receiver {
  readonly watchersPerName: number;
  /** The floor keeps what it decoded (for heap figures). */
  readonly retain: boolean;
  /** A heap baseline (forced GCs) is taken before the client is made. */
  readonly measureMemory: boolean;
  readonly metered: boolean;
  readonly floor: 'decode' | 'transport';
}

/** Starts a receiver in `client` watching every fixture, and waits for its subscription. */
async function subscribe(
  ctx: Context,
  client: ClientProcess,
  impl: Impl,
  resource: ResourceKind,
  fixtures: readonly Fixture[],
  receiver: Receiver,
): Promise<Session> {
  const nodeId = `bench-${impl}-${++sequence}`;
  await client.ask(
    {
      cmd: 'setup',
      impl,
      server: ctx.bench.address,
      nodeId,
      resource,
      names: fixtures.map((f) => f.name),
      watchersPerName: impl === 'floor' ? 0 : receiver.watchersPerName,
      retain: receiver.retain,
      measureMemory: receiver.measureMemory,
      metered: receiver.metered,
      floor: receiver.floor,
    },
    'ready',
  );
  const streamId = await ctx.bench.streamOf(nodeId);
  await ctx.bench.subscribed(streamId, resource, fixtures.length);
  return {
    client,
    deliver: (deliveries, change) =>
      ctx.bench.deliver(
        client,
        streamId,
        resource,
        // The floor has no watchers: "delivered" is the whole response decoded.
        impl === 'floor' ? Math.min(deliveries, 1) : deliveries,
        change,
      ),
  };
}

/**
 * A fresh client process subscribed to every fixture, while responses are held. With `warmup`
 * (generations of other resources: the same names, new bytes), a first client of the same kind
 * in the same process gets each generation in turn (a cold delivery, then full updates) and an
 * unchanged re-send, and is stopped: the sample then runs the JIT-compiled code of a process
 * that has been running, while its own cache is empty. (One round is not enough: our client
 * reaches its steady speed after three or four, the floor's simpler code sooner.) With
 * `warmupResend: false` and one generation, the warm-up is that one response and nothing else:
 * a service's second response.
 */
async function withSession(
  ctx: Context,
  impl: Impl,
  resource: ResourceKind,
  fixtures: readonly Fixture[],
  options: {
    readonly watchersPerName: number;
    readonly warmup: readonly (readonly Fixture[])[] | undefined;
    /** Default true: the warm-up ends with an unchanged re-send of its last generation. */
    readonly warmupResend?: boolean;
    /**
     * For heap figures: the floor keeps what it decoded, and a heap baseline is taken when the
     * process's first client is made (before the warm-up, so that no forced GC comes between the
     * warm-up and the timed response).
     */
    readonly retain?: boolean;
    /** Ours with an OpenTelemetry MeterProvider (gRFC A78's metrics recorded). */
    readonly metered?: boolean;
    /** The floor: protobufjs decoding (default) or the bare transport. */
    readonly floor?: 'decode' | 'transport';
  },
  body: (session: Session) => Promise<void>,
): Promise<void> {
  const { warmup } = options;
  const retain = options.retain ?? false;
  const receiver: Receiver = {
    watchersPerName: options.watchersPerName,
    retain,
    measureMemory: retain,
    metered: options.metered ?? false,
    floor: options.floor ?? 'decode',
  };
  const client = ClientProcess.start(impl);
  try {
    const [first, ...later] = warmup ?? [];
    if (first) {
      ctx.bench.setResources(resource, first);
      const session = await subscribe(ctx, client, impl, resource, first, receiver);
      await session.deliver(first.length);
      let last = first;
      for (const generation of later) {
        await session.deliver(first.length, () => ctx.bench.setResources(resource, generation));
        last = generation;
      }
      if (options.warmupResend ?? true) {
        await session.deliver(0, () => ctx.bench.setResources(resource, last));
      }
      await client.ask({ cmd: 'teardown' }, 'ready');
      await ctx.bench.settle();
    }
    ctx.bench.setResources(resource, fixtures);
    const timed = first ? { ...receiver, measureMemory: false } : receiver;
    await body(await subscribe(ctx, client, impl, resource, fixtures, timed));
  } finally {
    await client.close();
    await ctx.bench.settle();
  }
}

/** Warm-up generations of another seed: the same names in each, new bytes. */
function generations<T>(rounds: number, make: (generation: number) => T): T[] {
  return Array.from({ length: rounds }, (_, generation) => make(generation));
}

/**
 * Each receiver, in a fresh process per sample, gets `fixtures` as one response: with no warm-up
 * (a process's first response), or after the one warm-up response given (its second).
 */
async function oneResponse(
  ctx: Context,
  id: string,
  title: string,
  resource: ResourceKind,
  fixtures: readonly Fixture[],
  warmup: readonly (readonly Fixture[])[] | undefined,
): Promise<void> {
  for (let rep = 0; rep < ctx.config.sessions; rep++) {
    for (const impl of RECEIVERS) {
      ctx.progress(`${id} ${impl} ${rep + 1}/${ctx.config.sessions}`);
      const options = { watchersPerName: 1, warmup, warmupResend: false };
      await withSession(ctx, impl, resource, fixtures, options, async (session) => {
        const d = await session.deliver(fixtures.length);
        ctx.results.add(id, `${title} → all delivered`, impl, 'ms', d.deliveredMs);
        ctx.results.add(id, `${title} · client processing`, impl, 'ms', d.processingMs);
      });
    }
  }
}

/** Cold delivery of `count` EDS clusters, one watcher each; for the large size, updates too. */
function cdsSuite(size: 'small' | 'large', label: string): Suite {
  const cold = `cds-${label}-cold`;
  const resend = `cds-${label}-resend`;
  const changed = `cds-${label}-changed`;
  const startup = `cds-${label}-startup`;
  const second = `cds-${label}-second`;
  const workloads: Workload[] = [
    { id: cold, description: `cold CDS delivery of ${label} EDS clusters, one watcher each` },
  ];
  if (size === 'large') {
    workloads.push(
      {
        id: resend,
        description: `the ${label}-cluster response re-sent unchanged (new version), beside the bare transport`,
      },
      { id: changed, description: `one cluster of ${label} changed, all re-sent (SotW)` },
      { id: startup, description: `${label} clusters as the first response of a fresh process` },
      { id: second, description: `${label} clusters after one small warm-up response` },
    );
  }
  return {
    workloads,
    async run(ctx, wanted) {
      const count = size === 'small' ? ctx.config.smallClusters : ctx.config.largeClusters;
      const base = clusters(count);
      const t = {
        delivered: `CDS ${n(count)} cold → all delivered`,
        ack: `CDS ${n(count)} cold → ACK at server`,
        processing: `CDS ${n(count)} cold · client processing`,
        ackProcessing: `CDS ${n(count)} cold · client bytes → ACK`,
        resendAck: `CDS ${n(count)} re-sent unchanged → ACK`,
        resendProcessing: `CDS ${n(count)} re-sent unchanged · client processing`,
        resendTransport: `CDS ${n(count)} re-sent unchanged → ACK (floor: bare transport)`,
        changedDelivered: `CDS 1 of ${n(count)} changed → delivered`,
        changedAck: `CDS 1 of ${n(count)} changed → ACK`,
        changedProcessing: `CDS 1 of ${n(count)} changed · client processing`,
      };
      // Small responses need more rounds: about 20,000 clusters go through the warm-up client.
      const rounds = Math.max(ctx.config.warmupRounds, Math.ceil(20_000 / count));
      const warmup = generations(rounds, (g) => clusters(count, SEED + 1, g));
      const updates = size === 'large' ? ctx.config.updatesPerSession : 0;
      const timed = wanted(cold) || (size === 'large' && (wanted(resend) || wanted(changed)));
      // With the re-send, a fourth receiver: the floor's stream reading only version and nonce.
      const receivers: readonly (readonly [Impl, 'decode' | 'transport'])[] = [
        ...RECEIVERS.map((impl) => [impl, 'decode'] as const),
        ...(size === 'large' && wanted(resend) ? [['floor', 'transport'] as const] : []),
      ];
      // Per repetition, ours and the bare transport's re-sends (→ ACK), for a paired ratio.
      const pairs: { ours: number[]; bare: number[] }[] = [];
      for (let rep = 0; timed && rep < ctx.config.sessions; rep++) {
        const pair = { ours: [] as number[], bare: [] as number[] };
        pairs.push(pair);
        for (const [impl, floor] of receivers) {
          const bare = floor === 'transport';
          const who = bare ? 'bare transport' : impl;
          ctx.progress(`${cold} ${who} ${rep + 1}/${ctx.config.sessions}`);
          const options = { watchersPerName: 1, warmup, floor };
          await withSession(ctx, impl, 'cluster', base, options, async (session) => {
            const d = await session.deliver(count);
            if (!bare) {
              ctx.results.add(cold, t.delivered, impl, 'ms', d.deliveredMs);
              ctx.results.add(cold, t.ack, impl, 'ms', d.ackMs);
              ctx.results.add(cold, t.processing, impl, 'ms', d.processingMs);
              ctx.results.add(cold, t.ackProcessing, impl, 'ms', d.ackProcessingMs, true);
            }
            // What the server serves now: a change stays for the re-sends that follow it.
            const served = [...base];
            for (let u = 0; u < updates; u++) {
              if (wanted(resend)) {
                const r = await session.deliver(0, () => ctx.bench.setResources('cluster', served));
                // Beside the bare transport: ours and the peer; the decoding floor is not.
                if (impl !== 'floor' || bare) {
                  ctx.results.add(resend, t.resendTransport, impl, 'ms', r.ackMs);
                }
                if (bare) pair.bare.push(r.ackMs);
                else if (impl === 'ours') pair.ours.push(r.ackMs);
                if (bare) continue;
                ctx.results.add(resend, t.resendAck, impl, 'ms', r.ackMs);
                ctx.results.add(resend, t.resendProcessing, impl, 'ms', r.ackProcessingMs);
              }
              if (wanted(changed) && !bare) {
                const generation = rep * updates + u + 1;
                const index = (generation * 7919) % count;
                served[index] = cluster(index, generation);
                const c = await session.deliver(1, () =>
                  ctx.bench.setResource('cluster', served[index]!),
                );
                ctx.results.add(changed, t.changedDelivered, impl, 'ms', c.deliveredMs);
                ctx.results.add(changed, t.changedAck, impl, 'ms', c.ackMs);
                ctx.results.add(changed, t.changedProcessing, impl, 'ms', c.processingMs);
              }
            }
          });
        }
      }
      const paired = pairs
        .filter((p) => p.ours.length > 0 && p.bare.length > 0)
        .map((p) => median(p.ours) / median(p.bare));
      if (paired.length > 0) {
        ctx.notes.push(
          `${resend}: ours ÷ bare transport (→ ACK), paired by repetition: median ` +
            `${median(paired).toFixed(2)}× (${Math.min(...paired).toFixed(2)}× – ` +
            `${Math.max(...paired).toFixed(2)}×, ${paired.length} repetitions)`,
        );
      }
      // The same delivery with nothing compiled yet: what a service pays when it starts.
      if (size === 'large' && wanted(startup)) {
        const title = `CDS ${n(count)} as a fresh process's first response`;
        await oneResponse(ctx, startup, title, 'cluster', base, undefined);
      }
      // A service's second response: its code has seen one small response, not twenty.
      if (size === 'large' && wanted(second)) {
        const small = ctx.config.secondWarmupClusters;
        const title = `CDS ${n(count)} after one ${n(small)}-cluster response`;
        await oneResponse(ctx, second, title, 'cluster', base, [clusters(small, SEED + 1)]);
      }
      ctx.notes.push(
        `fixtures: ${n(count)} clusters, ${n(totalBytes(base))} bytes, sha256 ${fingerprint(base)}`,
      );
    },
  };
}

function edsSuite(): Suite {
  const id = 'eds-cold';
  const startup = 'eds-startup';
  const second = 'eds-second';
  return {
    workloads: [
      { id, description: 'cold EDS: 1,000 ClusterLoadAssignments of 100 endpoints' },
      { id: startup, description: 'the same as the first response of a fresh process' },
      { id: second, description: 'the same after one small EDS warm-up response' },
    ],
    async run(ctx, wanted) {
      const { assignments, endpointsPerAssignment: per } = ctx.config;
      const fixtures = loadAssignments(assignments, per);
      const warmup = generations(ctx.config.warmupRounds, (g) =>
        loadAssignments(ctx.config.warmupAssignments, per, SEED + 1, g),
      );
      const what = `EDS ${n(assignments)} × ${per} endpoints cold`;
      for (let rep = 0; wanted(id) && rep < ctx.config.sessions; rep++) {
        for (const impl of RECEIVERS) {
          ctx.progress(`${id} ${impl} ${rep + 1}/${ctx.config.sessions}`);
          const options = { watchersPerName: 1, warmup };
          await withSession(ctx, impl, 'endpoint', fixtures, options, async (session) => {
            const d = await session.deliver(assignments);
            ctx.results.add(id, `${what} → all delivered`, impl, 'ms', d.deliveredMs);
            ctx.results.add(id, `${what} → ACK at server`, impl, 'ms', d.ackMs);
            ctx.results.add(id, `${what} · client processing`, impl, 'ms', d.processingMs);
          });
        }
      }
      if (wanted(startup)) {
        const title = `EDS ${n(assignments)} × ${per} as a fresh process's first response`;
        await oneResponse(ctx, startup, title, 'endpoint', fixtures, undefined);
      }
      if (wanted(second)) {
        const small = ctx.config.secondWarmupAssignments;
        const title = `EDS ${n(assignments)} × ${per} after one ${n(small)}-assignment response`;
        const once = [loadAssignments(small, per, SEED + 1)];
        await oneResponse(ctx, second, title, 'endpoint', fixtures, once);
      }
      ctx.notes.push(
        `fixtures: ${n(assignments)} assignments, ${n(totalBytes(fixtures))} bytes, ` +
          `sha256 ${fingerprint(fixtures)}`,
      );
    },
  };
}

/**
 * Heap after GC in the client process, less the same just before the client was made: first
 * with one watcher per cluster, then with `watchersPerCluster` (the rest added to the cached
 * resources). Includes the bench's own watcher objects, the same class for both clients.
 */
function memorySuite(): Suite {
  const id = 'memory';
  return {
    workloads: [{ id, description: '100,000 watchers over 10,000 clusters: heap after GC' }],
    async run(ctx) {
      const { memoryClusters: count, watchersPerCluster: per } = ctx.config;
      const fixtures = clusters(count);
      const one = `heap: ${n(count)} clusters × 1 watcher`;
      const many = `heap: ${n(count * per)} watchers on ${n(count)} clusters`;
      const identity = new Map<Impl, string>();
      for (let rep = 0; rep < ctx.config.sessions; rep++) {
        for (const impl of RECEIVERS) {
          ctx.progress(`${id} ${impl} ${rep + 1}/${ctx.config.sessions}`);
          const options = { watchersPerName: 1, warmup: undefined, retain: true };
          await withSession(ctx, impl, 'cluster', fixtures, options, async (session) => {
            await session.deliver(count);
            const first = await session.client.ask({ cmd: 'report' }, 'report');
            ctx.results.add(id, one, impl, 'MB', MB(first.event.heapBytes));
            ctx.results.add(
              id,
              'array buffers',
              impl,
              'MB',
              MB(first.event.arrayBufferBytes),
              true,
            );
            if (impl === 'floor') return;
            const more = per - 1;
            await session.client.ask({ cmd: 'expect', deliveries: count * more }, 'ready');
            const delivered = session.client.next('delivered');
            session.client.send({ cmd: 'more', watchersPerName: more });
            await delivered;
            const second = (await session.client.ask({ cmd: 'report' }, 'report')).event;
            ctx.results.add(id, many, impl, 'MB', MB(second.heapBytes));
            const perWatcher = (second.heapBytes - first.event.heapBytes) / (count * more);
            ctx.results.add(id, 'bytes per added watcher', impl, 'B', perWatcher, true);
            identity.set(
              impl,
              `${n(second.watchers)} watchers of ${n(second.resources)} clusters: ` +
                (second.nonIdentical === 0
                  ? 'every watcher of a cluster holds the same object'
                  : `${n(second.nonIdentical)} clusters with differing objects`) +
                (second.frozen ? ', frozen' : ', not frozen'),
            );
          });
        }
      }
      for (const impl of ['ours', 'peer'] as const) {
        const bytes = ctx.results.median('bytes per added watcher', impl);
        const check = identity.get(impl);
        if (bytes === undefined || check === undefined) continue;
        ctx.notes.push(`${impl}: ${check}; ${bytes.toFixed(0)} bytes of heap per added watcher`);
      }
      const buffers = RECEIVERS.map(
        (impl) => `${impl} ${(ctx.results.median('array buffers', impl) ?? 0).toFixed(1)} MB`,
      );
      ctx.notes.push(
        `outside the heap, array buffers after GC with ${n(count)} clusters: ${buffers.join(', ')}`,
      );
    },
  };
}

/**
 * gRFC A78's metrics: ours on the cds-10k cold delivery and unchanged re-send, without a
 * MeterProvider and with the OpenTelemetry SDK's, in the same run and on the same fixtures.
 */
function metricsSuite(): Suite {
  const id = 'cds-10k-metrics';
  return {
    workloads: [{ id, description: 'ours on cds-10k cold and re-sent, with and without OTel' }],
    async run(ctx) {
      const count = ctx.config.largeClusters;
      const base = clusters(count);
      const rounds = Math.max(ctx.config.warmupRounds, Math.ceil(20_000 / count));
      const warmup = generations(rounds, (g) => clusters(count, SEED + 1, g));
      for (let rep = 0; rep < ctx.config.sessions; rep++) {
        for (const metered of [false, true]) {
          const how = metered ? 'with a MeterProvider' : 'no MeterProvider';
          ctx.progress(`${id} ${how} ${rep + 1}/${ctx.config.sessions}`);
          const options = { watchersPerName: 1, warmup, metered };
          await withSession(ctx, 'ours', 'cluster', base, options, async (session) => {
            const d = await session.deliver(count);
            const cold = `CDS ${n(count)} cold · client processing, ${how}`;
            ctx.results.add(id, cold, 'ours', 'ms', d.processingMs);
            for (let u = 0; u < ctx.config.updatesPerSession; u++) {
              const r = await session.deliver(0, () => ctx.bench.setResources('cluster', base));
              const resend = `CDS ${n(count)} re-sent unchanged · client processing, ${how}`;
              ctx.results.add(id, resend, 'ours', 'ms', r.ackProcessingMs);
            }
          });
        }
      }
    },
  };
}

/** 1000 → 1k, 30000 → 30k. */
const thousands = (count: number): string => `${count / 1000}k`;

/** gRPC's default receive limit, which the peer's channel keeps (its channel options are fixed). */
const GRPC_DEFAULT_MAX_RECEIVE = 4 * 1024 * 1024;

/**
 * Time and retained heap from 1,000 to 100,000 clusters, and from 1,000 to 10,000
 * ClusterLoadAssignments of 100 endpoints: one cold response per sample, in the same JIT state
 * at every size (the same warm-up of about 20,000 clusters / 1,200 assignments of other names),
 * then the heap after GC less the process's baseline before its first client. Slow (the 100,000
 * clusters are 28 MB, the 10,000 assignments 32 MB), so only with --filter.
 */
function scaleSuite(): Suite {
  const cds = (count: number) => `scale-cds-${thousands(count)}`;
  const eds = (count: number) => `scale-eds-${thousands(count)}`;
  const probe = config(false);
  return {
    workloads: [
      ...probe.scaleClusters.map((count) => ({
        id: cds(count),
        description: `${n(count)} clusters cold: time and heap per cluster (--filter only)`,
        optIn: true,
      })),
      ...probe.scaleAssignments.map((count) => ({
        id: eds(count),
        description: `${n(count)} ClusterLoadAssignments × 100 cold: time and heap (--filter only)`,
        optIn: true,
      })),
    ],
    async run(ctx, wanted) {
      const per = ctx.config.endpointsPerAssignment;
      const points = [
        ...ctx.config.scaleClusters.map((count) => ({
          id: cds(count),
          resource: 'cluster' as const,
          count,
          what: `${n(count)} clusters`,
          unit: 'cluster',
          make: () => clusters(count),
          warmup: () => generations(4, (g) => clusters(5_000, SEED + 1, g)),
        })),
        ...ctx.config.scaleAssignments.map((count) => ({
          id: eds(count),
          resource: 'endpoint' as const,
          count,
          what: `${n(count)} assignments × ${per}`,
          unit: 'assignment',
          make: () => loadAssignments(count, per),
          warmup: () => generations(4, (g) => loadAssignments(300, per, SEED + 1, g)),
        })),
      ].filter((point) => wanted(point.id));
      const warmups = new Map<string, Fixture[][]>();
      const curve = new Map<string, { count: number; ms: number; heap: number }[]>();
      for (const point of points) {
        const fixtures = point.make();
        const bytes = totalBytes(fixtures);
        const warmup = warmups.get(point.resource) ?? point.warmup();
        warmups.set(point.resource, warmup);
        const title = `scale: ${point.what} cold`;
        const failed = new Set<Impl>();
        for (let rep = 0; rep < ctx.config.scaleSessions; rep++) {
          for (const impl of RECEIVERS) {
            if (failed.has(impl)) continue;
            ctx.progress(`${point.id} ${impl} ${rep + 1}/${ctx.config.scaleSessions}`);
            const options = { watchersPerName: 1, warmup, retain: true };
            try {
              await withSession(ctx, impl, point.resource, fixtures, options, async (session) => {
                const d = await session.deliver(point.count);
                const report = (await session.client.ask({ cmd: 'report' }, 'report')).event;
                ctx.results.add(point.id, `${title} → all delivered`, impl, 'ms', d.deliveredMs);
                ctx.results.add(point.id, `${title} → ACK at server`, impl, 'ms', d.ackMs);
                const processing = `${title} · client processing`;
                ctx.results.add(point.id, processing, impl, 'ms', d.processingMs);
                ctx.results.add(
                  point.id,
                  `${title} · heap after GC`,
                  impl,
                  'MB',
                  MB(report.heapBytes),
                );
                const perUnit = report.heapBytes / point.count;
                ctx.results.add(point.id, `${title} · heap per ${point.unit}`, impl, 'B', perUnit);
              });
            } catch (error) {
              // Only the peer is expected to fail, and only over its 4 MiB limit: say what it did.
              if (impl !== 'peer' || bytes <= GRPC_DEFAULT_MAX_RECEIVE) throw error;
              failed.add(impl);
              const message = error instanceof Error ? error.message : String(error);
              ctx.notes.push(
                `${point.id}: peer failed on the ${n(bytes)}-byte response (its channel keeps ` +
                  `gRPC's 4 MiB limit; no option raises it): ${message.split('\n')[0]}`,
              );
            }
          }
        }
        for (const impl of RECEIVERS) {
          const ms = ctx.results.median(`${title} · client processing`, impl);
          const heap = ctx.results.median(`${title} · heap after GC`, impl);
          if (ms === undefined || heap === undefined) continue;
          const key = `${point.resource} ${impl}`;
          curve.set(key, [...(curve.get(key) ?? []), { count: point.count, ms, heap }]);
        }
        ctx.notes.push(
          `${point.id}: ${n(point.count)} resources, ${n(bytes)} bytes, sha256 ${fingerprint(fixtures)}`,
        );
      }
      // Linear means a constant cost per resource: per point, and the slope from the smallest
      // to the largest point (which leaves out what every size pays once).
      for (const [key, line] of curve) {
        const each = line.map(
          (p) =>
            `${thousands(p.count)} ${((p.ms * 1000) / p.count).toFixed(1)} µs ` +
            `${((p.heap * 1024 * 1024) / p.count).toFixed(0)} B`,
        );
        const [first, last] = [line[0]!, line.at(-1)!];
        const span = last.count - first.count;
        const slope =
          span > 0
            ? `; slope ${thousands(first.count)} → ${thousands(last.count)}: ` +
              `${(((last.ms - first.ms) * 1000) / span).toFixed(1)} µs, ` +
              `${(((last.heap - first.heap) * 1024 * 1024) / span).toFixed(0)} B`
            : '';
        ctx.notes.push(
          `per resource (client processing, heap), ${key}: ${each.join(' · ')}${slope}`,
        );
      }
    },
  };
}

/** `require()` time of the package in a fresh `node` process, module loading only. */
function importSuite(): Suite {
  const id = 'import';
  const modules: Readonly<Record<Impl, readonly string[]>> = {
    ours: [path.join(DIST, 'index.js')],
    peer: ['@grpc/grpc-js-xds'],
    // What we cannot do without: our two runtime dependencies.
    floor: ['@grpc/grpc-js', 'protobufjs'],
  };
  return {
    workloads: [{ id, description: 'package import time in a fresh process' }],
    async run(ctx) {
      const title = 'import in a fresh process';
      for (let rep = 0; rep < ctx.config.importSamples; rep++) {
        for (const impl of RECEIVERS) {
          ctx.progress(`${id} ${impl} ${rep + 1}/${ctx.config.importSamples}`);
          const script =
            "const { performance } = require('node:perf_hooks');" +
            'const start = performance.now();' +
            `for (const m of ${JSON.stringify(modules[impl])}) require(m);` +
            'process.stdout.write(String(performance.now() - start));';
          const child = spawnSync(process.execPath, ['-e', script], {
            cwd: ROOT,
            encoding: 'utf8',
          });
          const ms = Number(child.stdout);
          if (child.status !== 0 || !Number.isFinite(ms)) {
            throw new Error(`import ${impl}: ${child.stderr || child.stdout}`);
          }
          ctx.results.add(id, title, impl, 'ms', ms);
        }
      }
    },
  };
}

/** gRFC A37: watchClusterTree + ClusterResolver over an aggregate tree (ours only). */
function treeSuite(): Suite {
  const id = 'tree';
  return {
    workloads: [
      { id, description: 'aggregate tree of 200 clusters resolved to priorities (ours only)' },
    ],
    async run(ctx) {
      const tree = aggregateTree(ctx.config.treeClusters);
      const expected = tree.leaves * tree.prioritiesPerLeaf;
      const title = `A37 tree of ${n(tree.clusters.length)} clusters → ${n(expected)} priorities`;
      ctx.bench.setResources('cluster', tree.clusters);
      ctx.bench.setResources('endpoint', tree.endpoints);
      // The client discovers the tree level by level: the server answers as it asks.
      ctx.bench.releaseAll();
      try {
        for (let rep = 0; rep < ctx.config.sessions; rep++) {
          ctx.progress(`${id} ours ${rep + 1}/${ctx.config.sessions}`);
          const client = ClientProcess.start('ours');
          try {
            const done = await client.ask(
              {
                cmd: 'tree',
                server: ctx.bench.address,
                nodeId: `bench-tree-${++sequence}`,
                root: tree.root,
                expectedPriorities: expected,
              },
              'tree',
            );
            ctx.results.add(id, title, 'ours', 'ms', done.event.ms);
          } finally {
            await client.close();
            await ctx.bench.settle();
          }
        }
      } finally {
        ctx.bench.holdAll();
      }
      ctx.notes.push(
        `${id}: @grpc/grpc-js-xds has no public equivalent of watchClusterTree/ClusterResolver ` +
          '(its aggregate handling is inside its xds: resolver), so only ours is measured.',
      );
    },
  };
}

export const SUITES: readonly Suite[] = [
  importSuite(),
  cdsSuite('small', '1k'),
  cdsSuite('large', '10k'),
  metricsSuite(),
  edsSuite(),
  memorySuite(),
  treeSuite(),
  deltaSuite(),
  rpcSuite(),
  scaleSuite(),
];
