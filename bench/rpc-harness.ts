// The bench's side of the RPC workloads: the backends (grpc-js servers on 127.0.0.1 that answer
// with their own name), management servers serving `xds:///bench-rpc` → those backends, and the
// client processes (bench/rpc-child.ts).
import { fork } from 'node:child_process';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {
  ManagementServer,
  edsCluster,
  endpoints,
  listener,
  routeConfig,
  type JsonObject,
} from '../lib/testing';
import { ForkedClient } from './forked-client';
import { ClientProcess } from './harness';
import {
  ECHO_METHOD,
  XDS_SERVICE,
  backendName,
  type Impl,
  type RpcCommand,
  type RpcEvent,
  type RpcEventOf,
} from './rpc-protocol';

/** Generous: an answer that takes this long means the process has hung, and the run stops. */
const TIMEOUT_MS = 60_000;

/** One RPC client process. Events are queued per kind until asked for. */
export class RpcProcess extends ForkedClient<RpcCommand, RpcEvent> {
  /**
   * `bootstrapEnv`: GRPC_XDS_BOOTSTRAP_CONFIG for the process (the peer's bootstrap);
   * `v8Flags`: more of node's options. With `--cpu-prof DIR`, the process writes its profile
   * into DIR/<impl>, as the other clients do.
   */
  static start(impl: Impl, bootstrapEnv?: string, v8Flags: readonly string[] = []): RpcProcess {
    const profile = ClientProcess.profileDir && path.join(ClientProcess.profileDir, impl);
    const env = { ...process.env };
    delete env['GRPC_XDS_BOOTSTRAP'];
    delete env['GRPC_XDS_BOOTSTRAP_CONFIG'];
    if (bootstrapEnv !== undefined) env['GRPC_XDS_BOOTSTRAP_CONFIG'] = bootstrapEnv;
    const child = fork(path.join(__dirname, 'rpc-child.ts'), [impl], {
      cwd: path.resolve(__dirname, '..'),
      env,
      execArgv: [
        // memory-channels forces GCs (bench/settled-heap.ts); nothing else calls gc().
        '--expose-gc',
        ...v8Flags,
        ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []),
        '--import',
        'tsx',
      ],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new RpcProcess(child, 'RPC client process', TIMEOUT_MS);
  }

  /** The next event of a kind, already arrived or to come. */
  async next<E extends RpcEvent['ev']>(ev: E): Promise<RpcEventOf<E>> {
    return (await this.nextArrival(ev)).event;
  }

  /** Sends a command and waits for its answer. */
  ask<E extends RpcEvent['ev']>(command: RpcCommand, ev: E): Promise<RpcEventOf<E>> {
    const answer = this.next(ev);
    this.send(command);
    return answer;
  }
}

const identity = (bytes: Buffer): Buffer => bytes;

const ECHO_SERVICE: grpc.ServiceDefinition = {
  Echo: {
    path: ECHO_METHOD,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

/**
 * Backend sets of two grpc-js servers each, in this process, started when first asked for.
 * Backend `s<set>-<i>` answers every RPC with its name.
 */
export class Backends {
  private readonly sets = new Map<number, Promise<readonly string[]>>();
  private readonly servers: grpc.Server[] = [];

  /** The addresses (127.0.0.1:port) of set `set`. */
  addresses(set: number): Promise<readonly string[]> {
    let addresses = this.sets.get(set);
    if (!addresses) {
      addresses = Promise.all([0, 1].map((i) => this.listen(this.serve(backendName(set, i)))));
      this.sets.set(set, addresses);
    }
    return addresses;
  }

  /**
   * `count` addresses of one new server (answering `s<set>-0`) listening on as many ports: many
   * distinct backend addresses without as many servers.
   */
  ports(set: number, count: number): Promise<readonly string[]> {
    const server = this.serve(backendName(set, 0));
    return Promise.all(Array.from({ length: count }, () => this.listen(server)));
  }

  /** A server answering every RPC with `name`, not listening yet. */
  private serve(name: string): grpc.Server {
    const server = new grpc.Server();
    const answer = Buffer.from(name);
    server.addService(ECHO_SERVICE, {
      Echo: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => callback(null, answer),
    });
    this.servers.push(server);
    return server;
  }

  /** Opens a port of `server` on 127.0.0.1; its address. */
  private async listen(server: grpc.Server): Promise<string> {
    const port = await new Promise<number>((resolve, reject) => {
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      );
    });
    return `127.0.0.1:${port}`;
  }

  close(): void {
    for (const server of this.servers.splice(0)) server.forceShutdown();
    this.sets.clear();
  }
}

const ROUTE = `${XDS_SERVICE}-route`;
const CLUSTER = `${XDS_SERVICE}-cluster`;

/**
 * What the served resources configure beyond routing (bench/suites/rpc-features.ts):
 * `session`, the Listener's stateful session filter with a cookie (gRFC A55); `rewrite`, the
 * route's `auto_host_rewrite` with an EDS hostname per endpoint, from a server the bootstrap
 * trusts (gRFC A81).
 */
export type XdsFeature = 'session' | 'rewrite';

const SESSION_URL =
  'type.googleapis.com/envoy.extensions.filters.http.stateful_session.v3.StatefulSession';
const COOKIE_URL =
  'type.googleapis.com/envoy.extensions.http.stateful_session.cookie.v3.CookieBasedSessionState';

/** The Listener, with the stateful session filter ahead of the router for `session`. */
function benchListener(feature: XdsFeature | undefined): JsonObject {
  const base = listener(XDS_SERVICE, ROUTE);
  if (feature !== 'session') return base;
  const hcm = (base['api_listener'] as { api_listener: JsonObject }).api_listener;
  const session = {
    name: 'session',
    typed_config: {
      '@type': SESSION_URL,
      session_state: {
        name: 'envoy.http.stateful_session.cookie',
        typed_config: {
          '@type': COOKIE_URL,
          cookie: { name: 'bench-session', path: '/', ttl: '3600s' },
        },
      },
    },
  };
  const filters = [session, ...(hcm['http_filters'] as JsonObject[])];
  return { ...base, api_listener: { api_listener: { ...hcm, http_filters: filters } } };
}

/** The RouteConfiguration, its one route with `auto_host_rewrite` for `rewrite`. */
function benchRoutes(feature: XdsFeature | undefined): JsonObject {
  const base = routeConfig(ROUTE, { cluster: CLUSTER });
  if (feature !== 'rewrite') return base;
  const [host] = base['virtual_hosts'] as JsonObject[];
  const route = { match: { prefix: '' }, route: { cluster: CLUSTER, auto_host_rewrite: true } };
  return { ...base, virtual_hosts: [{ ...host, routes: [route] }] };
}

/**
 * The bootstrap JSON text for a client of `server`, ours or the peer's (whose bootstrap
 * validation insists on a locality).
 */
export function clientBootstrap(
  server: ManagementServer,
  options: { readonly serverFeatures?: readonly string[] } = {},
): string {
  const bootstrap = server.bootstrap({ nodeId: 'bench-rpc', ...options });
  return JSON.stringify({ ...bootstrap, node: { ...bootstrap.node, locality: {} } });
}

/** A management server serving `xds:///bench-rpc`: one route, one EDS cluster, one locality. */
export class XdsServer {
  private constructor(
    readonly server: ManagementServer,
    /** The bootstrap JSON text for a client of this server. */
    readonly bootstrap: string,
    private readonly feature: XdsFeature | undefined,
  ) {}

  static async start(addresses: readonly string[], feature?: XdsFeature): Promise<XdsServer> {
    const server = await ManagementServer.start();
    server.setResources('listener', [benchListener(feature)]);
    server.setResources('route', [benchRoutes(feature)]);
    server.setResources('cluster', [edsCluster(CLUSTER)]);
    // gRFC A81: the client rewrites the authority only for routes from a trusted server.
    const trusted = feature === 'rewrite' ? { serverFeatures: ['trusted_xds_server'] } : {};
    const xds = new XdsServer(server, clientBootstrap(server, trusted), feature);
    xds.moveTo(addresses);
    return xds;
  }

  /** Serves (and pushes to every subscribed client) the cluster's endpoints at `addresses`. */
  moveTo(addresses: readonly string[]): void {
    const assignment = endpoints(CLUSTER, [{ addresses }]);
    if (this.feature === 'rewrite') {
      // Each endpoint's EDS hostname, which auto_host_rewrite sends as the RPC's :authority.
      const [locality] = assignment['endpoints'] as { lb_endpoints: JsonObject[] }[];
      locality!.lb_endpoints.forEach((lb, i) => {
        (lb['endpoint'] as JsonObject)['hostname'] = `backend-${i}.bench.test`;
      });
    }
    this.server.setResources('endpoint', [assignment]);
  }

  close(): Promise<void> {
    return this.server.close();
  }
}
