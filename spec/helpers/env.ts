import { XdsClient, type XdsClientOptions } from '../../lib';
import { ManagementServer, type RecordedResponse } from '../../lib/testing';
import { TEST_RESOURCE_TIMEOUT_MS } from './constants';

export const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
export const EDS = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
export const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
export const RDS = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';

/** The gRPC transports a bootstrap server entry can choose. */
export type ApiType = 'AGGREGATED_GRPC' | 'AGGREGATED_DELTA_GRPC' | 'GRPC' | 'DELTA_GRPC';
/** The two ADS transports. */
export const API_TYPES: readonly ApiType[] = ['AGGREGATED_GRPC', 'AGGREGATED_DELTA_GRPC'];
/** The per-type transports (one stream per resource type), SotW and incremental. */
export const PER_TYPE_API_TYPES: readonly ApiType[] = ['GRPC', 'DELTA_GRPC'];

/** Whether an api_type speaks state of the world (else incremental). */
export function isSotw(apiType: ApiType): boolean {
  return apiType === 'AGGREGATED_GRPC' || apiType === 'GRPC';
}

export interface Env {
  server: ManagementServer;
  client: XdsClient;
  /** Another client on the same server; closed with the env. */
  newClient(options?: Partial<XdsClientOptions>): XdsClient;
  close(): Promise<void>;
}

/** A real management server on 127.0.0.1 and a client bootstrapped to it. */
export async function startEnv(
  options: Partial<XdsClientOptions> & { serverFeatures?: string[]; apiType?: ApiType } = {},
): Promise<Env> {
  const server = await ManagementServer.start();
  const clients: XdsClient[] = [];
  const { serverFeatures, apiType, ...clientOptions } = options;
  const newClient = (more: Partial<XdsClientOptions> = {}) => {
    const c = new XdsClient({
      bootstrap: server.bootstrap({
        nodeId: 'spec-node',
        serverFeatures: serverFeatures ?? [],
        ...(apiType && { apiType }),
      }),
      resourceTimeoutMs: TEST_RESOURCE_TIMEOUT_MS,
      ...clientOptions,
      ...more,
    });
    clients.push(c);
    return c;
  };
  const client = newClient();
  return {
    server,
    client,
    newClient,
    async close() {
      for (const c of clients) c.close();
      await server.close();
    },
  };
}

/**
 * The client's ACK or NACK of a response, SotW or delta (delta responses, which always list
 * removed_resources, are answered on the delta request log).
 */
export function answerTo(
  server: ManagementServer,
  response: RecordedResponse,
): Promise<{ readonly errorDetail?: { readonly code: number; readonly message: string } }> {
  const answers = (r: { streamId: number; responseNonce: string }) =>
    r.streamId === response.streamId && r.responseNonce === response.nonce;
  return response.removedResources
    ? server.waitForDeltaRequest(answers)
    : server.waitForRequest(answers);
}

/**
 * Resolves once the client has answered (ACK or NACK) the server's latest response, and that
 * answer drew no newer one. The client notifies watchers, and its listeners' microtasks run,
 * before its answer is written: whatever a response causes has happened by then, so this is
 * the barrier for "that response changed nothing" (see RecordingWatcher.expectNothingUntil).
 */
export async function settled(server: ManagementServer): Promise<void> {
  for (;;) {
    const last = server.responses.at(-1);
    if (!last) return;
    await answerTo(server, last);
    // The server answers a request as it logs it: a newer response is already in the log.
    if (server.responses.at(-1) === last) return;
  }
}
