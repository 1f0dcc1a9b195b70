// The demo's traffic: a grpc-js server for every endpoint of the snapshot (each answers one
// unary method with its own name), and a grpc-js channel on `xds:///…` through
// xds-client/grpc that sends RPCs and counts who answered.
import * as grpc from '@grpc/grpc-js';
import { BOOTSTRAP_OPTION, register } from '../grpc';
import { CliError, EXIT } from './errors';
import { resourceName, type ResourceJson, type Snapshot } from './snapshot';

/** No .proto: the request is empty, the answer is the backend's name, bytes both ways. */
const bytes = (value: Buffer) => value;
const NAME_METHOD: grpc.MethodDefinition<Buffer, Buffer> = {
  path: '/xds_client.demo.Demo/Name',
  requestStream: false,
  responseStream: false,
  requestSerialize: bytes,
  requestDeserialize: bytes,
  responseSerialize: bytes,
  responseDeserialize: bytes,
};

export interface Backend {
  /** `b1`, `b2`, … after the cluster whose endpoint it is. */
  readonly name: string;
  readonly cluster: string;
  readonly port: number;
  close(): void;
}

async function startBackend(name: string, cluster: string): Promise<Backend> {
  const server = new grpc.Server();
  server.addService(
    { Name: NAME_METHOD },
    {
      Name: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
        callback(null, Buffer.from(name)),
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return { name, cluster, port, close: () => server.forceShutdown() };
}

/** Every `socket_address` below `value`, in document order (either key spelling). */
function socketAddresses(value: unknown, found: ResourceJson[] = []): ResourceJson[] {
  if (Array.isArray(value)) {
    for (const item of value) socketAddresses(item, found);
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if ((key === 'socket_address' || key === 'socketAddress') && typeof item === 'object') {
        found.push(item as ResourceJson);
      } else {
        socketAddresses(item, found);
      }
    }
  }
  return found;
}

/**
 * Starts one backend per endpoint address of the snapshot (EDS resources and the
 * load_assignment of LOGICAL_DNS clusters) and returns the snapshot pointing at them: same
 * hosts (`localhost` stays `localhost`), the backends' ports.
 */
export async function startBackends(
  snapshot: Snapshot,
): Promise<{ snapshot: Snapshot; backends: Backend[] }> {
  const backends: Backend[] = [];
  const rewrite = async (cluster: string, resource: ResourceJson): Promise<ResourceJson> => {
    const copy = structuredClone(resource);
    let n = 0;
    for (const address of socketAddresses(copy)) {
      const backend = await startBackend(`${cluster.toLowerCase()}${++n}`, cluster);
      backends.push(backend);
      delete address['portValue'];
      address['port_value'] = backend.port;
    }
    return copy;
  };
  try {
    // EDS first, so that the backends are numbered in the order a reader meets them.
    const endpoints: ResourceJson[] = [];
    for (const assignment of snapshot.endpoints) {
      endpoints.push(await rewrite(String(resourceName('endpoints', assignment)), assignment));
    }
    const clusters: ResourceJson[] = [];
    for (const cluster of snapshot.clusters) {
      const withAddresses = cluster['load_assignment'] ?? cluster['loadAssignment'];
      clusters.push(withAddresses ? await rewrite(String(cluster['name']), cluster) : cluster);
    }
    return { snapshot: { ...snapshot, clusters, endpoints }, backends };
  } catch (e) {
    for (const backend of backends) backend.close();
    throw e;
  }
}

/** A backend's name, or the status of a failed RPC (`UNAVAILABLE`). */
type Outcome = { readonly by: string; readonly details?: string };

/** How many RPCs each backend answered, and the failures by status. */
export interface Tally {
  readonly sent: number;
  readonly counts: ReadonlyMap<string, number>;
  /** One message per failure status seen. */
  readonly failures: ReadonlyMap<string, string>;
}

/** A grpc-js client on an `xds:` target, its xDS client from the bootstrap given. */
export class DemoChannel {
  private readonly client: grpc.Client;

  constructor(
    readonly target: string,
    bootstrapJson: string,
  ) {
    register();
    this.client = new grpc.Client(target, grpc.credentials.createInsecure(), {
      [BOOTSTRAP_OPTION]: bootstrapJson,
    });
  }

  /** One RPC: who answered, or how it failed. */
  call(): Promise<Outcome> {
    return new Promise((resolve) => {
      this.client.makeUnaryRequest(
        NAME_METHOD.path,
        NAME_METHOD.requestSerialize,
        NAME_METHOD.responseDeserialize,
        Buffer.alloc(0),
        { deadline: Date.now() + 3000 },
        (error, answer) =>
          resolve(
            error
              ? { by: grpc.status[error.code] ?? String(error.code), details: error.details }
              : { by: answer!.toString() },
          ),
      );
    });
  }

  /**
   * Sends RPCs one at a time until the answers come from exactly `expected` (every one of them,
   * in a row): the channel has followed the last change. These RPCs are not counted.
   */
  async settle(expected: readonly string[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const seen = new Set<string>();
    for (;;) {
      const outcome = await this.call();
      if (expected.includes(outcome.by)) seen.add(outcome.by);
      else seen.clear();
      if (seen.size === expected.length) return;
      if (Date.now() > deadline) {
        const last = outcome.details ? `${outcome.by}: ${outcome.details}` : outcome.by;
        throw new CliError(
          EXIT.RESOURCE,
          `demo: RPCs to ${this.target} did not reach ${expected.join(', ')} within ${timeoutMs} ms (last: ${last})`,
        );
      }
      if (!seen.size) await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Sends `n` RPCs one after the other and counts the outcomes. */
  async count(n: number): Promise<Tally> {
    const counts = new Map<string, number>();
    const failures = new Map<string, string>();
    for (let i = 0; i < n; i++) {
      const outcome = await this.call();
      counts.set(outcome.by, (counts.get(outcome.by) ?? 0) + 1);
      if (outcome.details !== undefined) failures.set(outcome.by, outcome.details);
    }
    return { sent: n, counts, failures };
  }

  close(): void {
    this.client.close();
  }
}
