// The RPC workloads: real unary RPCs to real grpc-js backends on 127.0.0.1 through an `xds:`
// channel of ours, the same through @grpc/grpc-js-xds's, and the floor, plain grpc-js on the
// same backends (`ipv4:` + round_robin). Each client runs in a fresh process
// (bench/rpc-child.ts); the bench process holds the backends and the management servers.
//   rpc-throughput  a fixed number of RPCs, bounded concurrency, after a warm-up
//   rpc-first       channel creation → first answered RPC
//   rpc-push        a management server push (new endpoints) → first RPC answered by them
//   rpc-throughput-session, rpc-throughput-rewrite  rpc-throughput with a routing feature
//                   configured, beside the plain path (bench/suites/rpc-features.ts)
import { median, type Results } from '../stats';
import { Backends, RpcProcess, XdsServer } from '../rpc-harness';
import { absoluteNow, type ChannelSpec, type Impl } from '../rpc-protocol';
import type { Context, Suite } from '../suite';
import { METRICS, REWRITE, SESSION, TRACES, featureThroughput } from './rpc-features';

export interface RpcConfig {
  /**
   * Groups of three client processes (ours, peer, floor) for rpc-throughput; each gives
   * `rounds` samples per receiver.
   */
  readonly throughputProcesses: number;
  readonly warmupRpcs: number;
  readonly rounds: number;
  readonly rpcs: number;
  readonly concurrency: number;
  /** Client processes per receiver for rpc-first (one sample of each row per process). */
  readonly firstProcesses: number;
  /** Channels opened and closed between the new-process and the warmed-up sample. */
  readonly firstWarmups: number;
  /** Client processes per receiver for rpc-push. */
  readonly pushProcesses: number;
  /** Untimed pushes first, then timed ones, per process. */
  readonly pushWarmups: number;
  readonly pushes: number;
}

export function rpcConfig(quick: boolean): RpcConfig {
  return quick
    ? {
        throughputProcesses: 1,
        warmupRpcs: 2_000,
        rounds: 3,
        rpcs: 5_000,
        concurrency: 100,
        firstProcesses: 3,
        firstWarmups: 3,
        pushProcesses: 1,
        pushWarmups: 2,
        pushes: 5,
      }
    : {
        throughputProcesses: 3,
        warmupRpcs: 5_000,
        rounds: 5,
        rpcs: 20_000,
        concurrency: 100,
        firstProcesses: 7,
        firstWarmups: 5,
        pushProcesses: 3,
        pushWarmups: 2,
        pushes: 10,
      };
}

const RECEIVERS: readonly Impl[] = ['ours', 'peer', 'floor'];
const THROUGHPUT = 'rpc-throughput';
const FIRST = 'rpc-first';
const PUSH = 'rpc-push';

const n = (value: number): string => value.toLocaleString('en-US');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The table rows' titles (also what the targets look up). */
export function rpcTitles(rpc: RpcConfig) {
  return {
    throughput: `${n(rpc.rpcs)} unary RPCs, ${rpc.concurrency} in flight`,
    cpu: `${n(rpc.rpcs)} unary RPCs · client CPU`,
    /** Hidden: per round, the floor's time ÷ this receiver's (its share of the throughput). */
    paired: 'RPC throughput ÷ the floor, paired by round',
    firstCold: 'channel → first RPC, in a new process',
    firstWarm: 'channel → first RPC, in a warmed-up process',
    push: 'EDS push → first RPC on the new endpoints',
  };
}

/** Backend sets: 0 for throughput, 1–3 for rpc-first, 4 for rpc-features.ts, from 10 on for the pushes. */
const SET = { throughput: 0, cold: 1, warmup: 2, warm: 3, push: 10 } as const;

/**
 * A receiver's channel to the backends `server` serves (at `addresses`): ours and the peer
 * through `xds:`, the floor straight to the addresses. With `envBootstrap` the peer takes its
 * bootstrap from its process's environment (GRPC_XDS_BOOTSTRAP_CONFIG), not from the channel.
 */
function spec(
  impl: Impl,
  server: XdsServer,
  addresses: readonly string[],
  envBootstrap = false,
): ChannelSpec {
  if (impl === 'floor') return { kind: 'ipv4', addresses };
  if (impl === 'peer' && envBootstrap) return { kind: 'xds' };
  return { kind: 'xds', bootstrap: server.bootstrap };
}

/** The RPC workloads, sharing the backends and management servers they start. */
export function rpcSuite(): Suite {
  return {
    workloads: [
      { id: THROUGHPUT, description: 'unary RPCs through xds: vs grpc-js-xds vs plain grpc-js' },
      { id: FIRST, description: 'xds: channel creation → first answered RPC' },
      { id: PUSH, description: 'EDS push → first RPC answered by the new endpoints' },
      { id: SESSION, description: 'rpc-throughput (ours) with stateful session affinity' },
      { id: REWRITE, description: 'rpc-throughput (ours) with authority rewriting' },
      { id: METRICS, description: "rpc-throughput (ours) with A66's per-call metrics" },
      { id: TRACES, description: "rpc-throughput (ours) with A72's per-call spans" },
    ],
    async run(ctx, wanted) {
      const backends = new Backends();
      const servers: XdsServer[] = [];
      const serve = async (set: number) => {
        const server = await XdsServer.start(await backends.addresses(set));
        servers.push(server);
        return server;
      };
      try {
        if (wanted(THROUGHPUT)) await throughput(ctx, backends, serve);
        if (wanted(FIRST)) await first(ctx, backends, serve);
        if (wanted(PUSH)) await push(ctx, backends, serve);
        if (wanted(SESSION)) await featureThroughput(ctx, backends, SESSION, 'session');
        if (wanted(REWRITE)) await featureThroughput(ctx, backends, REWRITE, 'rewrite');
        if (wanted(METRICS)) await featureThroughput(ctx, backends, METRICS, 'metrics');
        if (wanted(TRACES)) await featureThroughput(ctx, backends, TRACES, 'traces');
      } finally {
        await Promise.all(servers.map((server) => server.close()));
        backends.close();
      }
    },
  };
}

type Serve = (set: number) => Promise<XdsServer>;

/** Runs `body` with a fresh client process of `impl`, closing it after. */
async function withProcess(
  impl: Impl,
  envBootstrap: string,
  body: (client: RpcProcess) => Promise<void>,
): Promise<void> {
  const client = RpcProcess.start(impl, impl === 'peer' ? envBootstrap : undefined);
  try {
    await body(client);
  } finally {
    await client.close();
  }
}

async function throughput(ctx: Context, backends: Backends, serve: Serve): Promise<void> {
  const rpc = ctx.config.rpc;
  const titles = rpcTitles(rpc);
  const addresses = await backends.addresses(SET.throughput);
  const server = await serve(SET.throughput);
  const answers = new Map<Impl, Map<string, number>>();
  const samples = rpc.throughputProcesses * rpc.rounds;
  for (let group = 0; group < rpc.throughputProcesses; group++) {
    // The three processes are open together and take turns, a batch each per round: drift on
    // a shared machine then falls on all three alike, and each round gives paired figures.
    const clients = new Map<Impl, RpcProcess>();
    try {
      for (const impl of RECEIVERS) {
        ctx.progress(`${THROUGHPUT} ${impl} warm-up ${group + 1}/${rpc.throughputProcesses}`);
        const client = RpcProcess.start(impl, impl === 'peer' ? server.bootstrap : undefined);
        clients.set(impl, client);
        await client.ask(
          {
            cmd: 'open',
            channel: spec(impl, server, addresses, true),
            warmup: rpc.warmupRpcs,
            concurrency: rpc.concurrency,
          },
          'ready',
        );
      }
      for (let round = 0; round < rpc.rounds; round++) {
        const ms = new Map<Impl, number>();
        // Each round starts with the next receiver, so none is always first or last.
        for (let i = 0; i < RECEIVERS.length; i++) {
          const impl = RECEIVERS[(i + round) % RECEIVERS.length]!;
          const sample = group * rpc.rounds + round + 1;
          ctx.progress(`${THROUGHPUT} ${impl} ${sample}/${samples}`);
          const batch = await clients
            .get(impl)!
            .ask({ cmd: 'batch', rpcs: rpc.rpcs, concurrency: rpc.concurrency }, 'batch');
          ctx.results.add(THROUGHPUT, titles.throughput, impl, 'ms', batch.ms);
          ctx.results.add(THROUGHPUT, titles.cpu, impl, 'ms', batch.cpuMs);
          ms.set(impl, batch.ms);
          if (round === rpc.rounds - 1) {
            const counts = answers.get(impl) ?? new Map<string, number>();
            for (const [name, count] of Object.entries(batch.answers)) {
              counts.set(name, (counts.get(name) ?? 0) + count);
            }
            answers.set(impl, counts);
          }
        }
        for (const impl of ['ours', 'peer'] as const) {
          const share = ms.get('floor')! / ms.get(impl)!;
          ctx.results.add(THROUGHPUT, titles.paired, impl, 'ms', share, true);
        }
      }
    } finally {
      await Promise.all([...clients.values()].map((client) => client.close()));
    }
  }
  const floor = ctx.results.median(titles.throughput, 'floor');
  const parts = RECEIVERS.flatMap((impl) => {
    const ms = ctx.results.median(titles.throughput, impl);
    const cpu = ctx.results.median(titles.cpu, impl);
    if (ms === undefined || cpu === undefined || floor === undefined) return [];
    const perSecond = n(Math.round((rpc.rpcs / ms) * 1000));
    const micros = (value: number) => `${((value * 1000) / rpc.rpcs).toFixed(1)} µs`;
    const paired = ctx.results.find(titles.paired, impl);
    const share = paired
      ? `, ${percentOf(median(paired.samples))} of the floor's ` +
        `(${percentOf(Math.min(...paired.samples))} – ${percentOf(Math.max(...paired.samples))})`
      : '';
    return [`${impl} ${perSecond} RPC/s${share}, ${micros(ms)} and ${micros(cpu)} CPU per RPC`];
  });
  ctx.notes.push(`${THROUGHPUT}: ${parts.join('; ')}`);
  ctx.notes.push(
    `${THROUGHPUT}: "of the floor's": the median over rounds of floor time ÷ time in the same ` +
      'round (min – max); RPC/s and µs from the medians in the table',
  );
  const split = RECEIVERS.map((impl) => {
    const counts = [...(answers.get(impl)?.entries() ?? [])].sort(([a], [b]) => a.localeCompare(b));
    const total = counts.reduce((sum, [, count]) => sum + count, 0);
    return `${impl} ${counts.map(([name, c]) => `${name} ${percentOf(c / total)}`).join(' / ')}`;
  });
  ctx.notes.push(`${THROUGHPUT}: answers per backend (round robin): ${split.join('; ')}`);
}

async function first(ctx: Context, backends: Backends, serve: Serve): Promise<void> {
  const rpc = ctx.config.rpc;
  const titles = rpcTitles(rpc);
  // A server (and a backend set) per role: nothing the timed channel asks for is cached or
  // connected in its process, whichever channel came before it.
  const [cold, warmup, warm] = await Promise.all([
    serve(SET.cold),
    serve(SET.warmup),
    serve(SET.warm),
  ]);
  const [coldSet, warmupSet, warmSet] = await Promise.all(
    [SET.cold, SET.warmup, SET.warm].map((set) => backends.addresses(set)),
  );
  // One untimed process first: this process's own servers (the management servers, the
  // backends) run their first-connection code then, not inside the first timed sample (ours,
  // which comes first in each round).
  ctx.progress(`${FIRST} warm-up`);
  await withProcess('ours', cold.bootstrap, async (client) => {
    const channel = (server: XdsServer, set: readonly string[]) => spec('ours', server, set, true);
    await client.ask(
      {
        cmd: 'first',
        cold: channel(cold, coldSet!),
        warmups: [channel(warmup, warmupSet!)],
        warm: channel(warm, warmSet!),
      },
      'first',
    );
  });
  for (let rep = 0; rep < rpc.firstProcesses; rep++) {
    for (const impl of RECEIVERS) {
      ctx.progress(`${FIRST} ${impl} ${rep + 1}/${rpc.firstProcesses}`);
      await withProcess(impl, cold.bootstrap, async (client) => {
        const result = await client.ask(
          {
            cmd: 'first',
            cold: spec(impl, cold, coldSet!, true),
            warmups: Array.from({ length: rpc.firstWarmups }, () => spec(impl, warmup, warmupSet!)),
            warm: spec(impl, warm, warmSet!),
          },
          'first',
        );
        ctx.results.add(FIRST, titles.firstCold, impl, 'ms', result.coldMs);
        ctx.results.add(FIRST, titles.firstWarm, impl, 'ms', result.warmMs);
      });
    }
  }
}

async function push(ctx: Context, backends: Backends, serve: Serve): Promise<void> {
  const rpc = ctx.config.rpc;
  const title = rpcTitles(rpc).push;
  const server = await serve(SET.push);
  const moves = rpc.pushWarmups + rpc.pushes;
  // Every push moves traffic to a set this process has never connected to (new pods).
  for (let set = 1; set <= moves; set++) await backends.addresses(SET.push + set);
  for (let rep = 0; rep < rpc.pushProcesses; rep++) {
    for (const impl of RECEIVERS) {
      ctx.progress(`${PUSH} ${impl} ${rep + 1}/${rpc.pushProcesses}`);
      const start = await backends.addresses(SET.push);
      server.moveTo(start);
      const channel: ChannelSpec =
        impl === 'floor' ? { kind: 'pushed', addresses: start } : spec(impl, server, start, true);
      await withProcess(impl, server.bootstrap, async (client) => {
        await client.ask({ cmd: 'push-start', channel, set: SET.push }, 'ready');
        for (let move = 1; move <= moves; move++) {
          const set = SET.push + move;
          const addresses = await backends.addresses(set);
          await client.ask({ cmd: 'push-expect', set }, 'ready');
          const moved = client.next('moved');
          const at = absoluteNow();
          if (impl === 'floor') client.send({ cmd: 'resolve', addresses });
          else server.moveTo(addresses);
          const ms = (await moved).at - at;
          if (move > rpc.pushWarmups) ctx.results.add(PUSH, title, impl, 'ms', ms);
          // Let the set's second backend connect before the next push moves away from it.
          await sleep(100);
        }
        await client.ask({ cmd: 'push-stop' }, 'ready');
      });
    }
  }
  ctx.notes.push(
    `${PUSH}: the floor's push is its own resolver handing grpc-js the new addresses over IPC ` +
      '(no xDS); every push moves to two backends the process has not connected to.',
  );
}

function percentOf(value: number): string {
  return `${(value * 100).toFixed(1)} %`;
}

/** The issue's targets for RPCs, each with the measured figure beside it. */
export function rpcTargets(results: Results, rpc: RpcConfig): string[] {
  const titles = rpcTitles(rpc);
  const mark = (met: boolean) => (met ? 'met   ' : 'MISSED');
  const lines: string[] = [];
  const paired = results.median(titles.paired, 'ours');
  if (paired !== undefined) {
    lines.push(
      `${mark(paired >= 0.95)} RPC throughput ≥ 95 % of plain grpc-js's ` +
        `(${percentOf(paired)}, median of the rounds' paired ratios)`,
    );
  }
  // Issue 25: a fresh process's channel → first RPC within 1.5× of plain grpc-js.
  const first = results.ratio(titles.firstCold, 'floor');
  if (first !== undefined) {
    lines.push(
      `${mark(first <= 1.5)} channel → first RPC in a new process within 1.5× of plain ` +
        `grpc-js, issue 25 (${first.toFixed(2)}×)`,
    );
  }
  const figures = [titles.throughput, titles.firstCold, titles.firstWarm, titles.push];
  const behind = figures.filter((title) => {
    const ratio = results.ratio(title, 'peer');
    return ratio !== undefined && ratio >= 1;
  });
  const compared = figures.filter((title) => results.ratio(title, 'peer') !== undefined);
  if (compared.length > 0) {
    lines.push(
      `${mark(behind.length === 0)} RPCs: ahead of @grpc/grpc-js-xds on ` +
        `${compared.length - behind.length} of ${compared.length} figures` +
        (behind.length ? ` (behind: ${behind.join('; ')})` : ''),
    );
  }
  return lines;
}
