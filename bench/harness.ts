// The bench's side of a sample: the one loopback management server, holding every response
// until the bench releases it, and the client processes it talks to over IPC.
import { fork } from 'node:child_process';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  ManagementServer,
  type RecordedRequest,
} from '../lib/testing';
import type { Fixture } from './fixtures';
import { ForkedClient, type Arrival } from './forked-client';
import type { Command, Event, Impl, ResourceKind } from './protocol';

/** Generous: a sample that takes this long has hung, and the run stops with an error. */
const TIMEOUT_MS = 120_000;

export const TYPE_URL: Readonly<Record<ResourceKind, string>> = {
  cluster: CLUSTER_TYPE_URL,
  endpoint: ENDPOINT_TYPE_URL,
};

type EventOf<E extends Event['ev']> = Extract<Event, { ev: E }>;

/** One client process (bench/child.ts). Events are queued per kind until asked for. */
export class ClientProcess extends ForkedClient<Command, Event> {
  /**
   * With a directory, every client process writes V8 CPU profiles (`--cpu-prof`) into its
   * receiver's subdirectory: DIR/ours, DIR/peer, DIR/floor.
   */
  static profileDir: string | undefined;

  static start(impl: Impl): ClientProcess {
    const profile = ClientProcess.profileDir && path.join(ClientProcess.profileDir, impl);
    const child = fork(path.join(__dirname, 'child.ts'), [], {
      // `--import tsx` resolves from here.
      cwd: path.resolve(__dirname, '..'),
      execArgv: [
        '--expose-gc',
        ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []),
        '--import',
        'tsx',
      ],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new ClientProcess(child, 'client process', TIMEOUT_MS);
  }

  /** The next event of a kind, already arrived or to come, with when it arrived. */
  next<E extends Event['ev']>(ev: E): Promise<Arrival<EventOf<E>>> {
    return this.nextArrival(ev);
  }

  /** Sends a command and waits for its answer. */
  ask<E extends Event['ev']>(command: Command, ev: E): Promise<Arrival<EventOf<E>>> {
    const answer = this.next(ev);
    this.send(command);
    return answer;
  }
}

/** What one delivery took: end to end at the server, and inside the client. */
export interface Delivery {
  /** From the server starting to write the response to the last watcher being called. */
  readonly deliveredMs: number | undefined;
  /** From the server starting to write the response to the ACK reaching it. */
  readonly ackMs: number;
  /** Client clock: response bytes in -> last watcher called (or, for the floor, all decoded). */
  readonly processingMs: number | undefined;
  /** Client clock: response bytes in -> ACK written. */
  readonly ackProcessingMs: number;
}

/** The management server, with responses of both types held until `deliver` releases them. */
export class BenchServer {
  private constructor(readonly server: ManagementServer) {}

  static async start(): Promise<BenchServer> {
    // ManagementServer takes requests up to 128 MiB: subscribing to 100,000 clusters names them
    // all (about 7 MB), over grpc-js's 4 MiB default.
    const server = await ManagementServer.start();
    server.holdResponses('cluster');
    server.holdResponses('endpoint');
    return new BenchServer(server);
  }

  get address(): string {
    return this.server.address;
  }

  /** The stream of the client with this node id, once its first request has arrived. */
  async streamOf(nodeId: string): Promise<number> {
    const request = await this.server.waitForRequest((r) => r.node?.id === nodeId, {
      timeoutMs: TIMEOUT_MS,
    });
    return request.streamId;
  }

  /** Until the stream has asked for `count` names of the type. */
  async subscribed(streamId: number, resource: ResourceKind, count: number): Promise<void> {
    const typeUrl = TYPE_URL[resource];
    await this.server.waitForRequest(
      (r) => r.streamId === streamId && r.typeUrl === typeUrl && r.resourceNames.length === count,
      { timeoutMs: TIMEOUT_MS },
    );
  }

  /**
   * Applies `change` to the served resources (held, so nothing is sent), tells the client how
   * many deliveries to expect, then releases the one response and times it.
   */
  async deliver(
    client: ClientProcess,
    streamId: number,
    resource: ResourceKind,
    deliveries: number,
    change: () => void = () => undefined,
  ): Promise<Delivery> {
    change();
    await client.ask({ cmd: 'expect', deliveries }, 'ready');
    const after = this.server.requests.length;
    const start = performance.now();
    this.server.releaseResponses(resource);
    this.server.holdResponses(resource);
    const sent = this.server.responses.at(-1);
    if (!sent || sent.streamId !== streamId || sent.typeUrl !== TYPE_URL[resource]) {
      throw new Error(`no ${resource} response was owed to stream ${streamId}`);
    }
    const nonce = sent.nonce;
    const ack = this.server
      .waitForRequest((r) => r.streamId === streamId && r.responseNonce === nonce, {
        after,
        timeoutMs: TIMEOUT_MS,
      })
      .then(() => performance.now());
    const [ackAt, delivered, acked] = await Promise.all([
      ack,
      deliveries > 0 ? client.next('delivered') : undefined,
      client.next('acked'),
    ]);
    return {
      deliveredMs: delivered && delivered.at - start,
      ackMs: ackAt - start,
      processingMs: delivered?.event.processingMs,
      ackProcessingMs: acked.event.processingMs,
    };
  }

  setResources(resource: ResourceKind, fixtures: readonly Fixture[]): void {
    this.server.setResources(resource, fixtures);
  }

  setResource(resource: ResourceKind, fixture: Fixture): void {
    this.server.setResource(resource, fixture);
  }

  /** Serves both types at once (for the cluster tree, whose client asks as it discovers). */
  releaseAll(): void {
    this.server.releaseResponses();
  }

  holdAll(): void {
    this.server.holdResponses('cluster');
    this.server.holdResponses('endpoint');
  }

  /**
   * Between samples: waits until the last client's stream is gone, and drops the request log
   * (each request names up to 10,000 resources, and nothing waits on old ones).
   */
  async settle(): Promise<void> {
    for (let i = 0; i < 200 && this.server.streamCount > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // The log is the server's own array, exposed read-only for tests; only the bench, between
    // samples, with no waitForRequest pending, may empty it.
    (this.server.requests as RecordedRequest[]).length = 0;
  }

  close(): Promise<void> {
    return this.server.close();
  }
}
