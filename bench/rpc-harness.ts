// The bench's side of the RPC workloads: the backends (grpc-js servers on 127.0.0.1 that answer
// with their own name), management servers serving `xds:///bench-rpc` → those backends, and the
// client processes (bench/rpc-child.ts).
import { fork } from 'node:child_process';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ManagementServer, edsCluster, endpoints, listener, routeConfig } from '../lib/testing';
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
   * `bootstrapEnv`: GRPC_XDS_BOOTSTRAP_CONFIG for the process (the peer's bootstrap). With
   * `--cpu-prof DIR`, the process writes its profile into DIR/<impl>, as the other clients do.
   */
  static start(impl: Impl, bootstrapEnv?: string): RpcProcess {
    const profile = ClientProcess.profileDir && path.join(ClientProcess.profileDir, impl);
    const env = { ...process.env };
    delete env['GRPC_XDS_BOOTSTRAP'];
    delete env['GRPC_XDS_BOOTSTRAP_CONFIG'];
    if (bootstrapEnv !== undefined) env['GRPC_XDS_BOOTSTRAP_CONFIG'] = bootstrapEnv;
    const child = fork(path.join(__dirname, 'rpc-child.ts'), [impl], {
      cwd: path.resolve(__dirname, '..'),
      env,
      execArgv: [
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
      addresses = Promise.all([0, 1].map((i) => this.start(backendName(set, i))));
      this.sets.set(set, addresses);
    }
    return addresses;
  }

  private async start(name: string): Promise<string> {
    const server = new grpc.Server();
    const answer = Buffer.from(name);
    server.addService(ECHO_SERVICE, {
      Echo: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => callback(null, answer),
    });
    this.servers.push(server);
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

/** A management server serving `xds:///bench-rpc`: one route, one EDS cluster, one locality. */
export class XdsServer {
  private constructor(
    readonly server: ManagementServer,
    /** The bootstrap JSON text for a client of this server. */
    readonly bootstrap: string,
  ) {}

  static async start(addresses: readonly string[]): Promise<XdsServer> {
    const server = await ManagementServer.start();
    server.setResources('listener', [listener(XDS_SERVICE, ROUTE)]);
    server.setResources('route', [routeConfig(ROUTE, { cluster: CLUSTER })]);
    server.setResources('cluster', [edsCluster(CLUSTER)]);
    const bootstrap = server.bootstrap({ nodeId: 'bench-rpc' });
    const xds = new XdsServer(
      server,
      // @grpc/grpc-js-xds's bootstrap validation insists on a locality.
      JSON.stringify({ ...bootstrap, node: { ...bootstrap.node, locality: {} } }),
    );
    xds.moveTo(addresses);
    return xds;
  }

  /** Serves (and pushes to every subscribed client) the cluster's endpoints at `addresses`. */
  moveTo(addresses: readonly string[]): void {
    this.server.setResources('endpoint', [endpoints(CLUSTER, [{ addresses }])]);
  }

  close(): Promise<void> {
    return this.server.close();
  }
}
