// memory-channels: heap per open `xds:` channel (issue 25: at most 0.6× the peer's), beside
// @grpc/grpc-js-xds's and plain grpc-js channels to the same backends. One fresh client process
// (bench/rpc-child.ts, bench/channel-heap.ts) per receiver and sample opens N channels, each
// made ready by one wait-for-ready RPC, and reports heap after forced GCs with them open, less
// the same before them. Two rows:
//   N targets   each channel to its own `xds:///channels-<i>`: its own Listener, route, EDS
//               cluster and two endpoints, so each holds its own resolver state, xDS resources,
//               LB tree and subchannels (the figure);
//   one target  all N to `xds:///channels-shared`: the per-channel cost alone (resources,
//               watches and subchannels are shared).
import { ManagementServer, edsCluster, endpoints, listener, routeConfig } from '../../lib/testing';
import { Backends, RpcProcess, clientBootstrap } from '../rpc-harness';
import type { ChannelSpec, Impl } from '../rpc-protocol';
import { type Context, n, type Suite } from '../suite';
import type { Results } from '../stats';

const ID = 'memory-channels';
const RECEIVERS: readonly Impl[] = ['ours', 'peer', 'floor'];
/** The backends' set names (their answers), apart from the other RPC workloads' sets. */
const SET = 90;

export interface ChannelHeapConfig {
  /** Channels each client process opens. */
  readonly channels: number;
  /** Client processes per receiver and row (one sample each). */
  readonly processes: number;
}

export function channelHeapConfig(quick: boolean): ChannelHeapConfig {
  return quick ? { channels: 50, processes: 1 } : { channels: 100, processes: 3 };
}

/** The table's rows (also what the targets look up). */
export function channelHeapTitles(config: ChannelHeapConfig) {
  const count = n(config.channels);
  return {
    distinct: `heap per channel, ${count} channels to ${count} targets`,
    shared: `heap per channel, ${count} channels to one target`,
    /** Hidden: array buffers (outside the heap) per channel, N targets. */
    buffers: `array buffers per channel, ${count} channels to ${count} targets`,
  };
}

/** The services a run serves: each name's two backend addresses. */
type Services = ReadonlyMap<string, readonly string[]>;

/** One management server serving `xds:///<name>` for every service, as rpc-harness's one. */
async function serve(services: Services): Promise<ManagementServer> {
  const server = await ManagementServer.start();
  const names = [...services.keys()];
  server.setResources(
    'listener',
    names.map((name) => listener(name, `${name}-route`)),
  );
  server.setResources(
    'route',
    names.map((name) => routeConfig(`${name}-route`, { cluster: `${name}-cluster` })),
  );
  server.setResources(
    'cluster',
    names.map((name) => edsCluster(`${name}-cluster`)),
  );
  server.setResources(
    'endpoint',
    [...services].map(([name, addresses]) => endpoints(`${name}-cluster`, [{ addresses }])),
  );
  return server;
}

export function memoryChannelsSuite(): Suite {
  return {
    workloads: [{ id: ID, description: 'heap per open xds: channel (N targets, one target)' }],
    async run(ctx, wanted) {
      if (!wanted(ID)) return;
      const config = ctx.config.channelHeap;
      const count = config.channels;
      const backends = new Backends();
      try {
        // Two distinct addresses per service: no two channels' subchannels are shared, except
        // the one-target row's, which all go to `channels-shared`.
        const names = [
          ...Array.from({ length: count }, (_, i) => `channels-${i}`),
          'channels-warmup',
          'channels-anchor',
          'channels-shared',
        ];
        const addresses = await backends.ports(SET, names.length * 2);
        const services: Services = new Map(
          names.map((name, i) => [name, addresses.slice(i * 2, i * 2 + 2)]),
        );
        const server = await serve(services);
        try {
          await measure(ctx, services, clientBootstrap(server));
        } finally {
          await server.close();
        }
      } finally {
        backends.close();
      }
    },
  };
}

async function measure(ctx: Context, services: Services, bootstrap: string): Promise<void> {
  const config = ctx.config.channelHeap;
  const titles = channelHeapTitles(config);
  const distinct = Array.from({ length: config.channels }, (_, i) => `channels-${i}`);
  const shared = Array.from({ length: config.channels }, () => 'channels-shared');
  const rows = [
    { title: titles.distinct, targets: distinct },
    { title: titles.shared, targets: shared },
  ];
  for (let rep = 0; rep < config.processes; rep++) {
    for (const row of rows) {
      for (const impl of RECEIVERS) {
        ctx.progress(`${ID} ${impl} ${rep + 1}/${config.processes}`);
        // Every channel of ours and of the peer on one bootstrap: one shared xDS client each
        // (ours: the client pool's, per bootstrap; the peer's: its singleton, from the
        // environment variable, which is how it shares one).
        const spec = (service: string): ChannelSpec =>
          impl === 'floor'
            ? { kind: 'ipv4', addresses: services.get(service)! }
            : impl === 'ours'
              ? { kind: 'xds', service, bootstrap }
              : { kind: 'xds', service };
        const client = RpcProcess.start(impl, impl === 'peer' ? bootstrap : undefined);
        try {
          const heap = await client.ask(
            {
              cmd: 'channel-heap',
              warmup: spec('channels-warmup'),
              anchor: spec('channels-anchor'),
              channels: row.targets.map(spec),
            },
            'channel-heap',
          );
          const perChannel = (heap.openBytes - heap.baselineBytes) / config.channels;
          ctx.results.add(ID, row.title, impl, 'KiB', perChannel / 1024);
          if (row.title === titles.distinct) {
            const buffers = (heap.openArrayBuffers - heap.baselineArrayBuffers) / config.channels;
            ctx.results.add(ID, titles.buffers, impl, 'KiB', buffers / 1024, true);
          }
        } finally {
          await client.close();
        }
      }
    }
  }
  const buffers = RECEIVERS.map(
    (impl) => `${impl} ${(ctx.results.median(titles.buffers, impl) ?? 0).toFixed(1)} KiB`,
  );
  ctx.notes.push(
    `${ID}: heap after forced GCs with the channels open, less the same with only the anchor ` +
      `channel open, ÷ ${n(config.channels)}; outside the heap, array buffers per channel ` +
      `(${n(config.channels)} targets): ${buffers.join(', ')}`,
  );
}

/** Issue 25's bar for heap per channel, with the measured ratios beside it. */
export function channelHeapTargets(results: Results, config: ChannelHeapConfig): string[] {
  const titles = channelHeapTitles(config);
  const distinct = results.ratio(titles.distinct, 'peer');
  if (distinct === undefined) return [];
  const shared = results.ratio(titles.shared, 'peer');
  const mark = distinct <= 0.6 ? 'met   ' : 'MISSED';
  return [
    `${mark} heap per xds: channel at most 0.6× the peer's, issue 25 (${distinct.toFixed(2)}× ` +
      `with a target per channel` +
      (shared === undefined ? ')' : `; ${shared.toFixed(2)}× with all on one target)`),
  ];
}
