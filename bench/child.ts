// A client process: runs one receiver (ours, the peer or the floor) against the bench's
// management server, as the bench tells it over IPC (bench/protocol.ts). Started by
// bench/harness.ts with `node --expose-gc --import tsx bench/child.ts`.
import { performance } from 'node:perf_hooks';
import {
  Probe,
  loadClusters,
  loadOurs,
  preload,
  startFloor,
  startOurs,
  startPeer,
  type BenchClient,
  type Watcher,
} from './clients';
import type { Command, Event, SetupCommand, TreeCommand } from './protocol';
import { settledHeap } from './settled-heap';

const send = (event: Event): void => {
  process.send?.(event);
};
const probe = new Probe(send);
let client: BenchClient | undefined;
let baseline = { heapUsed: 0, arrayBuffers: 0 };

async function setup(command: SetupCommand): Promise<void> {
  preload(command.impl, command.resource);
  if (command.measureMemory) baseline = await settledHeap();
  const start = { ours: startOurs, peer: startPeer, floor: startFloor }[command.impl];
  client = start({ ...command, probe });
  send({ ev: 'ready' });
}

/** Do all the watchers of each resource hold one and the same object? */
function checkIdentity(watchers: readonly Watcher[]) {
  const held = new Map<string, unknown>();
  const differing = new Set<string>();
  let frozen = watchers.length > 0;
  for (const watcher of watchers) {
    const value = watcher.value;
    const first = held.get(watcher.name);
    if (value === undefined) differing.add(watcher.name);
    else if (first === undefined) held.set(watcher.name, value);
    else if (first !== value) differing.add(watcher.name);
    if (frozen && !Object.isFrozen(value)) frozen = false;
  }
  return {
    watchers: watchers.length,
    nonIdentical: differing.size,
    resources: new Set(watchers.map((w) => w.name)).size,
    frozen,
  };
}

/** watchClusterTree, then a ClusterResolver over its mechanisms, until every priority is known. */
async function tree(command: TreeCommand): Promise<void> {
  const { XdsClient } = loadOurs();
  const clusters = loadClusters();
  if (!clusters) throw new Error('watchClusterTree / ClusterResolver are not in the build');
  const xds = new XdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: command.server, channel_creds: [{ type: 'insecure' }] }],
      node: { id: command.nodeId },
    },
  });
  client = { watchers: [], watchMore: () => undefined, close: () => xds.close() };
  const fail = (error: Error) => send({ ev: 'error', message: error.message });
  // Connect first (the server answers this watch with an empty response), so the time below is
  // the tree's: four round trips (root, middle aggregates, leaves, endpoints) and the work.
  await new Promise<void>((resolve) => {
    xds.once('response', () => resolve());
    xds.watchEndpoints('bench-connect', {
      onResourceChanged: () => undefined,
      onResourceError: () => undefined,
    });
  });
  const start = performance.now();
  let resolver: InstanceType<typeof clusters.ClusterResolver> | undefined;
  clusters.watchClusterTree(xds, command.root, {
    onUpdate({ mechanisms }) {
      if (resolver) {
        resolver.updateMechanisms(mechanisms);
        return;
      }
      resolver = new clusters.ClusterResolver(xds, mechanisms, {
        onUpdate(priorities) {
          const complete = priorities.every((priority) => priority.localities.length > 0);
          if (complete && priorities.length === command.expectedPriorities) {
            send({ ev: 'tree', ms: performance.now() - start, priorities: priorities.length });
          }
        },
        onError: fail,
      });
    },
    onError: fail,
  });
}

async function handle(command: Command): Promise<void> {
  switch (command.cmd) {
    case 'setup':
      return setup(command);
    case 'expect':
      probe.expect(command.deliveries);
      send({ ev: 'ready' });
      return;
    case 'more':
      client?.watchMore(command.watchersPerName);
      return;
    case 'report': {
      const identity = checkIdentity(client?.watchers ?? []);
      const memory = await settledHeap();
      send({
        ev: 'report',
        heapBytes: memory.heapUsed - baseline.heapUsed,
        arrayBufferBytes: memory.arrayBuffers - baseline.arrayBuffers,
        ...identity,
      });
      return;
    }
    case 'tree':
      return tree(command);
    case 'teardown':
      client?.close();
      client = undefined;
      send({ ev: 'ready' });
      return;
    case 'exit':
      process.exit(0);
  }
}

process.on('message', (command: Command) => {
  handle(command).catch((error: unknown) => {
    send({
      ev: 'error',
      message: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  });
});
// The bench going away takes its client processes with it.
process.on('disconnect', () => process.exit(0));
