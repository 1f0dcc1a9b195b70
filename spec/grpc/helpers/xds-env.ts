// The end-to-end environment of spec/grpc/e2e: our ManagementServer, real grpc-js backends on
// 127.0.0.1 (helpers/backends.ts) and real grpc-js clients on `xds:///…` through `register()`,
// each given the server's bootstrap through BOOTSTRAP_OPTION. Everything started here is
// stopped by `close()`, which every spec calls in `afterEach`.
//
//   const env = await startXdsEnv(['a', 'b']);
//   env.serve({ clusters: [edsCluster('c')], endpoints: [endpoints('c', [{ addresses: env.addresses('a', 'b') }])] });
//   const client = env.client();
//   const counts = await waitForDistribution(client, 'both answer', (c) => c.size === 2);
//
// Every wait is bounded by an RPC count or a deadline and fails with what it saw last.

import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { BOOTSTRAP_OPTION, register } from '../../../lib/grpc';
// Internal on purpose: a short failover timer (an option of ours, not public) keeps specs fast.
import { PRIORITY_FAILOVER_TIMEOUT_OPTION } from '../../../lib/grpc/lb/priority/priority';
import {
  ManagementServer,
  listener,
  type BootstrapOptions,
  type JsonObject,
} from '../../../lib/testing';
import {
  closeAll,
  failedKey,
  newClient,
  sendRpc,
  sendRpcs,
  startBackends,
  type Backend,
  type BackendOptions,
  type RpcOptions,
} from './backends';

export { failedKey, sendRpc, sendRpcs } from './backends';

/** The service every spec's channel targets: `xds:///echo.test`, Listener "echo.test". */
export const SERVICE = 'echo.test';
export const TARGET = `xds:///${SERVICE}`;
/** The RouteConfiguration the Listener names. */
export const ROUTE_NAME = 'echo-routes';

/** The priority policy's failover timeout the specs' channels use (A56's is 10 s). */
export const FAILOVER_TIMEOUT_MS = 300;

export interface Service {
  /** The routes of the one virtual host (domains ['*']); default: everything to `clusters[0]`. */
  readonly routes?: readonly JsonObject[];
  readonly clusters: readonly JsonObject[];
  readonly endpoints?: readonly JsonObject[];
  /** Fields merged into the Listener's HttpConnectionManager. */
  readonly hcm?: JsonObject;
}

export interface XdsEnv {
  readonly server: ManagementServer;
  /** The backends, by name. */
  readonly backends: Readonly<Record<string, Backend>>;
  /** `127.0.0.1:<port>` of each named backend, in order. */
  addresses(...names: string[]): string[];
  /**
   * Sets the whole configuration of SERVICE on the server: its Listener (RDS ROUTE_NAME), the
   * route configuration, the clusters and their endpoints.
   */
  serve(service: Service): void;
  /** A grpc-js client on `target` (default TARGET) with the server's bootstrap (insecure by default). */
  client(
    options?: grpc.ChannelOptions & { target?: string },
    credentials?: grpc.ChannelCredentials,
  ): grpc.Client;
  /** Closes clients, backends and the server. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts a management server and one backend per name (with `backendOptions`); the clients'
 * bootstrap is the server's, with `bootstrapOptions` (e.g. apiType for delta ADS).
 */
export async function startXdsEnv(
  backendNames: readonly string[] = [],
  backendOptions: BackendOptions = {},
  bootstrapOptions: BootstrapOptions = {},
): Promise<XdsEnv> {
  register();
  const server = await ManagementServer.start();
  const started = await startBackends(backendNames, backendOptions);
  const backends: Record<string, Backend> = {};
  for (const backend of started) backends[backend.name] = backend;
  const clients = new Set<grpc.Client>();
  let closed = false;
  const bootstrap = JSON.stringify(server.bootstrap(bootstrapOptions));
  return {
    server,
    backends,
    addresses: (...names) =>
      names.map((name) => {
        const backend = backends[name];
        assert.ok(backend, `no backend named ${name}`);
        return backend.address;
      }),
    serve(service) {
      server.setResources('listener', [serviceListener(service.hcm ?? {})]);
      server.setResources('route', [
        routes(service.routes ?? [everything(String(service.clusters[0]?.name))]),
      ]);
      server.setResources('cluster', [...service.clusters]);
      server.setResources('endpoint', [...(service.endpoints ?? [])]);
    },
    client(options = {}, credentials) {
      const { target = TARGET, ...rest } = options;
      const channelOptions = {
        [BOOTSTRAP_OPTION]: bootstrap,
        [PRIORITY_FAILOVER_TIMEOUT_OPTION]: FAILOVER_TIMEOUT_MS,
        ...rest,
      };
      const client = newClient(target, channelOptions, credentials);
      clients.add(client);
      return client;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const client of clients) client.close();
      await closeAll();
      await server.close();
    },
  };
}

/** SERVICE's Listener: RDS ROUTE_NAME over ADS, the router filter, `hcm` merged in. */
export function serviceListener(hcm: JsonObject = {}): JsonObject {
  const base = listener(SERVICE, ROUTE_NAME);
  const apiListener = (base.api_listener as { api_listener: JsonObject }).api_listener;
  return { ...base, api_listener: { api_listener: { ...apiListener, ...hcm } } };
}

/** ROUTE_NAME: one virtual host for every domain with these routes, in order. */
export function routes(routeList: readonly JsonObject[], name = ROUTE_NAME): JsonObject {
  return { name, virtual_hosts: [{ name: 'vh', domains: ['*'], routes: [...routeList] }] };
}

/** A route for every RPC to `cluster`; `route` fields (e.g. max_stream_duration) merged in. */
export function everything(cluster: string, route: JsonObject = {}): JsonObject {
  return { match: { prefix: '' }, route: { cluster, ...route } };
}

export interface DistributionOptions extends RpcOptions {
  /** RPCs per batch (default 50). */
  batch?: number;
  concurrency?: number;
  /** Gives up after this many RPCs (default 2000). */
  maxRpcs?: number;
  /**
   * Gives up after this long (default 15 s: a batch whose RPCs wait out their deadlines takes
   * seconds on a loaded machine; a wait that is met returns at once).
   */
  timeoutMs?: number;
}

const DISTRIBUTION_DEADLINE_MS = 15_000;

/**
 * Sends batches of RPCs until `done(counts of the last batch)` holds, and returns those counts.
 * Fails with `what` and the last counts after `maxRpcs` RPCs or `timeoutMs`.
 */
export async function waitForDistribution(
  client: grpc.Client,
  what: string,
  done: (counts: Map<string, number>) => boolean,
  options: DistributionOptions = {},
): Promise<Map<string, number>> {
  const { batch = 50, maxRpcs = 2000, timeoutMs = DISTRIBUTION_DEADLINE_MS, ...rpc } = options;
  const deadline = Date.now() + timeoutMs;
  let sent = 0;
  let counts = new Map<string, number>();
  while (sent < maxRpcs && Date.now() < deadline) {
    counts = await sendRpcs(client, batch, rpc);
    sent += batch;
    if (done(counts)) return counts;
  }
  assert.fail(`${what}: not reached after ${sent} RPCs; last batch: ${show(counts)}`);
}

/** Waits until every RPC of a batch lands on `name` (and nothing fails). */
export function waitForAllOn(
  client: grpc.Client,
  name: string,
  options: DistributionOptions = {},
): Promise<Map<string, number>> {
  return waitForDistribution(
    client,
    `every RPC on ${name}`,
    (c) => c.size === 1 && c.has(name),
    options,
  );
}

/** Counts as `{ a: 10, 'failed:UNAVAILABLE': 2 }`, for messages. */
export function show(counts: ReadonlyMap<string, number>): string {
  return JSON.stringify(Object.fromEntries([...counts].sort()));
}

/** The share of `key` in `counts`. */
export function share(counts: ReadonlyMap<string, number>, key: string): number {
  let total = 0;
  for (const n of counts.values()) total += n;
  return total === 0 ? 0 : (counts.get(key) ?? 0) / total;
}

/** Asserts that `key` has `expected` ± `tolerance` of the RPCs. */
export function assertShare(
  counts: ReadonlyMap<string, number>,
  key: string,
  expected: number,
  tolerance: number,
): void {
  const actual = share(counts, key);
  assert.ok(
    Math.abs(actual - expected) <= tolerance,
    `share of ${key}: ${actual.toFixed(3)}, expected ${expected} ± ${tolerance}; counts ${show(counts)}`,
  );
}

/** The error an RPC fails with; fails the test if the RPC succeeds. */
export async function rpcError(
  client: grpc.Client,
  options: RpcOptions = {},
): Promise<grpc.ServiceError> {
  try {
    const name = await sendRpc(client, options);
    assert.fail(`the RPC was expected to fail, but ${name} answered it`);
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    return e as grpc.ServiceError;
  }
}

/** Sends RPCs until one fails, and returns that error (bounded by count and time). */
export async function waitForFailure(
  client: grpc.Client,
  what: string,
  matches: (e: grpc.ServiceError) => boolean = () => true,
  options: { timeoutMs?: number; deadlineMs?: number; metadata?: grpc.Metadata } = {},
): Promise<grpc.ServiceError> {
  const { timeoutMs = 5000, ...rpc } = options;
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      last = `answered by ${await sendRpc(client, rpc)}`;
    } catch (e) {
      const error = e as grpc.ServiceError;
      if (matches(error)) return error;
      last = `${grpc.status[error.code]}: ${error.details}`;
    }
  }
  assert.fail(`${what}: no matching failure within ${timeoutMs} ms; last RPC ${last}`);
}

export const UNAVAILABLE = failedKey(grpc.status.UNAVAILABLE);
