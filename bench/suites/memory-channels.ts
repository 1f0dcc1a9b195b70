// memory-channels: heap per open `xds:` channel (issue 25: at most 0.6× the peer's), beside
// @grpc/grpc-js-xds's and plain grpc-js channels to the same backends. One fresh client process
// (bench/rpc-child.ts, bench/channel-heap.ts) per receiver, row and sample opens `held` channels
// and keeps them (the shared xDS client and the compiled code are then in the baseline), then N
// more, each made ready by one wait-for-ready RPC, and reports heap after forced GCs with them
// open, less the same before them, ÷ N. Two rows:
//   N targets   each channel to its own `xds:///channels-<i>`: its own Listener, route, EDS
//               cluster and two endpoints, so each holds its own resolver state, xDS resources,
//               LB tree and subchannels (the figure);
//   one target  all channels, held ones too, to `xds:///channels-shared`: the per-channel cost
//               alone (resources, watches and subchannels are shared).
import * as path from 'node:path';
import { ManagementServer, edsCluster, endpoints, listener, routeConfig } from '../../lib/testing';
import { Backends, RpcProcess, clientBootstrap } from '../rpc-harness';
import type { ChannelSpec, Impl } from '../rpc-protocol';
import { type Context, n, type Suite } from '../suite';
import type { Results } from '../stats';

const ID = 'memory-channels';
const RECEIVERS: readonly Impl[] = ['ours', 'peer', 'floor'];
/** The backends' set name (their answer), apart from the other RPC workloads' sets. */
const SET = 90;
const SHARED = 'channels-shared';
/**
 * The interpreter only: the code V8 would compile and optimize while the channels open is the
 * process's, not the channels' (with the optimizing tiers, a quick run's heap snapshots had 3–7
 * KiB of it per channel, different for each receiver and run size); what a channel keeps is
 * the same in every tier.
 */
const V8_FLAGS = ['--max-opt=0'];

export interface ChannelHeapConfig {
  /** Channels measured in each client process. */
  readonly channels: number;
  /** Channels opened and kept before the baseline, in each client process. */
  readonly held: number;
  /** Client processes per receiver and row (one sample each). */
  readonly processes: number;
}

export function channelHeapConfig(quick: boolean): ChannelHeapConfig {
  return quick
    ? { channels: 50, held: 25, processes: 1 }
    : { channels: 100, held: 50, processes: 3 };
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

const targets = (prefix: string, count: number): string[] =>
  Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

export function memoryChannelsSuite(): Suite {
  return {
    workloads: [{ id: ID, description: 'heap per open xds: channel (N targets, one target)' }],
    async run(ctx, wanted) {
      if (!wanted(ID)) return;
      const config = ctx.config.channelHeap;
      const backends = new Backends();
      try {
        const names = [
          ...targets('channels', config.channels),
          ...targets('channels-held', config.held),
          'channels-warmup',
          SHARED,
        ];
        // Two addresses of their own per service: no two channels share a subchannel, except
        // the one-target row's, which all go to `channels-shared`.
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
  const rows = [
    {
      title: titles.distinct,
      key: 'targets',
      held: targets('channels-held', config.held),
      channels: targets('channels', config.channels),
    },
    {
      title: titles.shared,
      key: 'shared',
      held: Array.from({ length: config.held }, () => SHARED),
      channels: Array.from({ length: config.channels }, () => SHARED),
    },
  ];
  for (let rep = 0; rep < config.processes; rep++) {
    for (const row of rows) {
      for (const impl of RECEIVERS) {
        ctx.progress(`${ID} ${row.key} ${impl} ${rep + 1}/${config.processes}`);
        // Every channel of ours and of the peer on one bootstrap, so one shared xDS client
        // each: ours from its client pool (one client per bootstrap), the peer's singleton,
        // which it makes from the environment variable (the way it shares one client).
        const spec = (service: string): ChannelSpec =>
          impl === 'floor'
            ? { kind: 'ipv4', addresses: services.get(service)! }
            : impl === 'ours'
              ? { kind: 'xds', service, bootstrap }
              : { kind: 'xds', service };
        const client = RpcProcess.start(impl, impl === 'peer' ? bootstrap : undefined, V8_FLAGS);
        try {
          const heap = await client.ask(
            {
              cmd: 'channel-heap',
              warmup: spec('channels-warmup'),
              held: row.held.map(spec),
              channels: row.channels.map(spec),
              ...(ctx.heapSnapshots && {
                snapshots: path.join(ctx.heapSnapshots, `${impl}-${row.key}-${rep + 1}`),
              }),
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
    `${ID}: heap after forced GCs with ${n(config.held + config.channels)} channels open, less ` +
      `the same with the first ${n(config.held)}, ÷ ${n(config.channels)}; outside the heap, ` +
      `array buffers per channel (${n(config.channels)} targets): ${buffers.join(', ')}`,
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
