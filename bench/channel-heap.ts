// The client process's side of memory-channels (bench/suites/memory-channels.ts): heap per open
// channel. Channels are made and made ready by bench/rpc-child.ts's own functions, passed in, so
// every receiver's channels are the ones its other RPC workloads use.
import * as v8 from 'node:v8';
import type * as grpc from '@grpc/grpc-js';
import type { ChannelHeapCommand, ChannelSpec, RpcEventOf } from './rpc-protocol';
import { settledHeap } from './settled-heap';

/** How the process makes a channel, and makes it ready (one answered wait-for-ready RPC). */
export interface ChannelMaker {
  open(spec: ChannelSpec): grpc.Client;
  ready(client: grpc.Client): Promise<unknown>;
}

export async function channelHeap(
  command: ChannelHeapCommand,
  maker: ChannelMaker,
): Promise<RpcEventOf<'channel-heap'>> {
  const warmup = maker.open(command.warmup);
  await maker.ready(warmup);
  warmup.close();
  const clients: grpc.Client[] = [];
  // One after another: every channel has its answer before the next one starts.
  const openAll = async (specs: readonly ChannelSpec[]) => {
    for (const spec of specs) {
      const client = maker.open(spec);
      clients.push(client);
      await maker.ready(client);
    }
  };
  try {
    await openAll(command.held);
    const baseline = await settledHeap();
    if (command.snapshots) v8.writeHeapSnapshot(`${command.snapshots}-baseline.heapsnapshot`);
    await openAll(command.channels);
    const opened = await settledHeap();
    if (command.snapshots) v8.writeHeapSnapshot(`${command.snapshots}-open.heapsnapshot`);
    return {
      ev: 'channel-heap',
      baselineBytes: baseline.heapUsed,
      openBytes: opened.heapUsed,
      baselineArrayBuffers: baseline.arrayBuffers,
      openArrayBuffers: opened.arrayBuffers,
    };
  } finally {
    for (const client of clients) client.close();
  }
}
