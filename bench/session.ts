// The workloads. Each sample starts a fresh client process (bench/child.ts), lets it subscribe
// while the server holds its responses, then releases one pre-encoded response and times it:
// end to end at the server (release -> last watcher called, release -> ACK received) and inside
// the client (response bytes in -> last watcher called). Receivers take turns within each
// repetition, so drift on the machine spreads over all three.
import { ClientProcess, type Delivery } from './harness';
import type { Fixture } from './fixtures';
import type { Impl, ResourceKind } from './protocol';
import type { Context } from './suite';

export const RECEIVERS: readonly Impl[] = ['ours', 'peer', 'floor'];

let sequence = 0;

/** A node id no other client of this bench run has. */
export function nextNodeId(prefix: string): string {
  return `${prefix}-${++sequence}`;
}

export interface Session {
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
export async function withSession(
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
export function generations<T>(rounds: number, make: (generation: number) => T): T[] {
  return Array.from({ length: rounds }, (_, generation) => make(generation));
}

/**
 * Each receiver, in a fresh process per sample, gets `fixtures` as one response: with no warm-up
 * (a process's first response), or after the one warm-up response given (its second).
 */
export async function oneResponse(
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
