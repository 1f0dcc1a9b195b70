// Several management servers for one client, in the priority order of its bootstrap's
// xds_servers (gRFC A71), some of them dead ports that a spec can bring to life.
import { createServer } from 'node:net';
import type { FallbackEvent, XdsClient, XdsClientOptions } from '../../lib';
import { XdsClient as Client } from '../../lib';
import { ManagementServer } from '../../lib/testing';
import { TEST_RESOURCE_TIMEOUT_MS } from './constants';
import type { ApiType } from './env';
import { waitFor } from './wait';

/** Fast, jitter-free reconnects, at both levels: our stream backoff and grpc-js's channel's. */
export const FLEET_OPTIONS: Partial<XdsClientOptions> = {
  backoff: { initialMs: 20, multiplier: 2, maxMs: 200, jitter: 0 },
  channelOptions: {
    'grpc.initial_reconnect_backoff_ms': 20,
    'grpc.max_reconnect_backoff_ms': 100,
  },
  resourceTimeoutMs: TEST_RESOURCE_TIMEOUT_MS,
};

/** A port on 127.0.0.1 that nothing listens on (until a spec starts a server there). */
export async function deadPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface Fleet {
  /** By priority: a server, or undefined for a dead port. */
  readonly servers: (ManagementServer | undefined)[];
  /** By priority: '127.0.0.1:PORT'. */
  readonly addresses: readonly string[];
  /** The bootstrap's xds_servers, by priority. */
  readonly xdsServers: ReturnType<ManagementServer['bootstrap']>['xds_servers'];
  readonly client: XdsClient;
  /** Every 'fallback' event of the client. */
  readonly fallbacks: FallbackEvent[];
  /** The live server at `index` (fails if it is a dead port). */
  live(index: number): ManagementServer;
  /** Starts a server on the dead port at `index`. */
  revive(index: number): Promise<ManagementServer>;
  /** Until the client has reported `count` fallback events. */
  fallback(count: number): Promise<FallbackEvent>;
  close(): Promise<void>;
}

/**
 * One management server per entry of `alive` (false: a dead port), and a client whose
 * bootstrap lists them all, in that order, each speaking `apiTypes[i]` (or `apiType`).
 */
export async function startFleet(
  alive: readonly boolean[],
  options: {
    apiType?: ApiType;
    apiTypes?: readonly ApiType[];
    client?: Partial<XdsClientOptions>;
  } = {},
): Promise<Fleet> {
  const servers: (ManagementServer | undefined)[] = [];
  const addresses: string[] = [];
  for (const up of alive) {
    const server = up ? await ManagementServer.start() : undefined;
    servers.push(server);
    addresses.push(server ? server.address : `127.0.0.1:${await deadPort()}`);
  }
  const xdsServers = addresses.map((address, i) => {
    const apiType = options.apiTypes?.[i] ?? options.apiType;
    return {
      server_uri: address,
      channel_creds: [{ type: 'insecure' }],
      ...(apiType && { api_type: apiType }),
    };
  });
  const client = new Client({
    bootstrap: { xds_servers: xdsServers, node: { id: 'spec-node' } },
    ...FLEET_OPTIONS,
    ...options.client,
  });
  const fallbacks: FallbackEvent[] = [];
  client.on('fallback', (event) => fallbacks.push(event));
  return {
    servers,
    addresses,
    xdsServers,
    client,
    fallbacks,
    live(index) {
      const server = servers[index];
      if (!server) throw new Error(`server ${index} is a dead port`);
      return server;
    },
    async revive(index) {
      const port = Number(addresses[index]!.split(':')[1]);
      const server = await ManagementServer.start({ port });
      servers[index] = server;
      return server;
    },
    fallback(count) {
      return waitFor(
        () => `${count} fallback events (got ${JSON.stringify(fallbacks)})`,
        () => fallbacks[count - 1],
      );
    },
    async close() {
      client.close();
      await Promise.all(servers.map((s) => s?.close()));
    },
  };
}
