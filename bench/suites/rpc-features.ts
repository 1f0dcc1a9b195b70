// The cost of the routing features a route or Listener may configure (issue 24), measured as
// rpc-throughput measures the plain path: the same unary batches through an `xds:` channel of
// ours whose resources configure
//   rpc-throughput-session  stateful session affinity (gRFC A55): the Listener's cookie filter,
//                           every RPC sending back the cookie the first one got;
//   rpc-throughput-rewrite  authority rewriting (gRFC A81): the route's auto_host_rewrite, an
//                           EDS hostname per endpoint, the server trusted by the bootstrap;
// and the cost of per-call telemetry (issue 22), the same resources with the channel made after
// register() with the OpenTelemetry SDK's
//   rpc-throughput-metrics  MeterProvider (gRFC A66's client instruments);
//   rpc-throughput-traces   TracerProvider (gRFC A72's call and attempt spans).
// Beside it, in the same rounds, the plain `xds:` channel of ours (the feature's cost is the
// paired ratio of the two) and the floor, plain grpc-js. The peer does not run here.
import { median } from '../stats';
import { type Backends, RpcProcess, type XdsFeature, XdsServer } from '../rpc-harness';
import type { ChannelSpec } from '../rpc-protocol';
import type { Context } from '../suite';

export const SESSION = 'rpc-throughput-session';
export const REWRITE = 'rpc-throughput-rewrite';
export const METRICS = 'rpc-throughput-metrics';
export const TRACES = 'rpc-throughput-traces';

/** What the feature lane has: a server feature (the resources), or telemetry (the client). */
type Feature = XdsFeature | 'metrics' | 'traces';

const isTelemetry = (feature: Feature): feature is 'metrics' | 'traces' =>
  feature === 'metrics' || feature === 'traces';

/** Backend set of these workloads: their own pair, so the plain workload's are untouched. */
const SET = 4;

/**
 * The channels of a round: ours with the feature, ours without it, the floor; for telemetry
 * also `hooks`, ours with the telemetry's hooks running and its records going nowhere
 * (bench/telemetry-cost.ts): what is the library's of telemetry's cost.
 */
type Lane = 'feature' | 'hooks' | 'plain' | 'floor';
const lanesOf = (feature: Feature): readonly Lane[] =>
  isTelemetry(feature) ? ['feature', 'hooks', 'plain', 'floor'] : ['feature', 'plain', 'floor'];

const n = (value: number): string => value.toLocaleString('en-US');
const percent = (value: number): string => `${(value * 100).toFixed(1)} %`;

/** A lane's row in the table: the workload's own, so the two workloads' rows stay apart. */
export function featureTitle(ctx: Context, feature: Feature, lane: Lane): string {
  const rpc = ctx.config.rpc;
  const what = {
    feature: `with ${feature}`,
    hooks: `${feature} hooks, recorded nowhere`,
    plain: 'plain xds:',
    floor: 'floor',
  }[lane];
  return `${n(rpc.rpcs)} unary RPCs (${feature} run) · ${what}`;
}

/** One of the two workloads: `feature` configured on a management server of its own. */
export async function featureThroughput(
  ctx: Context,
  backends: Backends,
  id: string,
  feature: Feature,
): Promise<void> {
  const rpc = ctx.config.rpc;
  const addresses = await backends.addresses(SET);
  const [configured, plain] = await Promise.all([
    XdsServer.start(addresses, isTelemetry(feature) ? undefined : feature),
    XdsServer.start(addresses),
  ]);
  const LANES = lanesOf(feature);
  const channels: Record<Lane, ChannelSpec> = {
    feature: { kind: 'xds', bootstrap: configured.bootstrap },
    hooks: { kind: 'xds', bootstrap: plain.bootstrap },
    plain: { kind: 'xds', bootstrap: plain.bootstrap },
    floor: { kind: 'ipv4', addresses },
  };
  const times = new Map<Lane, number[]>(LANES.map((lane) => [lane, []]));
  const cpu = new Map<Lane, number[]>(LANES.map((lane) => [lane, []]));
  const ofPlain: number[] = [];
  /** Per round, the hooks lane's throughput ÷ plain's (telemetry only). */
  const hooksOfPlain: number[] = [];
  const ofFloor: number[] = [];
  const answers = new Map<string, number>();
  /** Per group, telemetry alone in the feature lane's process (bench/telemetry-cost.ts). */
  const sdkAlone: number[] = [];
  const tracersAlone: number[] = [];
  const samples = rpc.throughputProcesses * rpc.rounds;
  try {
    for (let group = 0; group < rpc.throughputProcesses; group++) {
      const clients = new Map<Lane, RpcProcess>();
      try {
        for (const lane of LANES) {
          ctx.progress(`${id} ${lane} warm-up ${group + 1}/${rpc.throughputProcesses}`);
          const client = RpcProcess.start(lane === 'floor' ? 'floor' : 'ours');
          clients.set(lane, client);
          await client.ask(
            {
              cmd: 'open',
              channel: channels[lane],
              warmup: rpc.warmupRpcs,
              concurrency: rpc.concurrency,
              session: lane === 'feature' && feature === 'session',
              ...((lane === 'feature' || lane === 'hooks') &&
                isTelemetry(feature) && { telemetry: feature, recorded: lane === 'feature' }),
            },
            'ready',
          );
        }
        for (let round = 0; round < rpc.rounds; round++) {
          const ms = new Map<Lane, number>();
          for (let i = 0; i < LANES.length; i++) {
            const lane = LANES[(i + round) % LANES.length]!;
            ctx.progress(`${id} ${lane} ${group * rpc.rounds + round + 1}/${samples}`);
            const batch = await clients
              .get(lane)!
              .ask({ cmd: 'batch', rpcs: rpc.rpcs, concurrency: rpc.concurrency }, 'batch');
            ctx.results.add(
              id,
              featureTitle(ctx, feature, lane),
              lane === 'floor' ? 'floor' : 'ours',
              'ms',
              batch.ms,
            );
            times.get(lane)!.push(batch.ms);
            cpu.get(lane)!.push(batch.cpuMs);
            ms.set(lane, batch.ms);
            if (lane === 'feature' && round === rpc.rounds - 1) {
              for (const [name, count] of Object.entries(batch.answers)) {
                answers.set(name, (answers.get(name) ?? 0) + count);
              }
            }
          }
          ofPlain.push(ms.get('plain')! / ms.get('feature')!);
          ofFloor.push(ms.get('floor')! / ms.get('feature')!);
          if (ms.has('hooks')) hooksOfPlain.push(ms.get('plain')! / ms.get('hooks')!);
        }
        if (isTelemetry(feature)) {
          ctx.progress(`${id} telemetry alone ${group + 1}/${rpc.throughputProcesses}`);
          const alone = await clients
            .get('feature')!
            .ask({ cmd: 'telemetry-alone', kind: feature, rpcs: rpc.rpcs }, 'telemetry-alone');
          sdkAlone.push(alone.sdkCpuMs);
          tracersAlone.push(alone.tracersCpuMs);
        }
      } finally {
        await Promise.all([...clients.values()].map((client) => client.close()));
      }
    }
  } finally {
    await Promise.all([configured.close(), plain.close()]);
  }
  const range = (values: readonly number[]) =>
    `${percent(median(values))} (${percent(Math.min(...values))} – ${percent(Math.max(...values))})`;
  const perRpc = (lane: Lane) => {
    const micros = (value: number) => `${((value * 1000) / rpc.rpcs).toFixed(1)} µs`;
    const ms = median(times.get(lane)!);
    return `${lane} ${n(Math.round((rpc.rpcs / ms) * 1000))} RPC/s, ${micros(ms)} and ${micros(median(cpu.get(lane)!))} CPU per RPC`;
  };
  ctx.notes.push(`${id}: ${LANES.map(perRpc).join('; ')}`);
  if (isTelemetry(feature)) {
    const micros = (ms: number) => (ms * 1000) / rpc.rpcs;
    const plainCpu = micros(median(cpu.get('plain')!));
    const of = (values: readonly number[]) => {
      const us = micros(median(values));
      return `${us.toFixed(1)} µs (${percent(us / plainCpu)} of plain xds:'s CPU per RPC)`;
    };
    ctx.notes.push(
      `${id}: ${feature} alone, no RPCs, in the same process: the SDK's own calls ` +
        `${of(sdkAlone)}, our tracers on the SDK ${of(tracersAlone)}`,
    );
    ctx.notes.push(
      `${id}: with ${feature}'s hooks, recorded nowhere (the library's own cost), ` +
        `${range(hooksOfPlain)} of plain xds:'s throughput, paired by round`,
    );
  }
  ctx.notes.push(
    `${id}: with ${feature}, ${range(ofPlain)} of plain xds:'s throughput and ${range(ofFloor)} ` +
      "of the floor's, paired by round (median, min – max)",
  );
  const split = [...answers.entries()].sort(([a], [b]) => a.localeCompare(b));
  const total = split.reduce((sum, [, count]) => sum + count, 0);
  ctx.notes.push(
    `${id}: answers per backend with ${feature}: ` +
      split.map(([name, count]) => `${name} ${percent(count / total)}`).join(' / '),
  );
}
