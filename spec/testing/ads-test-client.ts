// A bare ADS client for testing the management server itself: one grpc-js bidi call, requests
// written by hand, responses queued for the spec to take in order with a deadline. It knows no
// xDS rules, so the server's behaviour is what the specs see.
import { Client, credentials, type ClientDuplexStream, type StatusObject } from '@grpc/grpc-js';
import { lookupMessageType, messageCodec, typeNameOfUrl } from '../../lib/codec';
import type { DiscoveryRequest, DiscoveryResponse } from '../../lib/generated/protos';
import { ADS_METHOD_PATH, type ManagementServer } from '../../lib/testing';
import { EVENT_DEADLINE_MS } from '../helpers/constants';
import { realClearTimeout, realSetTimeout } from '../helpers/wait';

const requestCodec = messageCodec('envoy.service.discovery.v3.DiscoveryRequest');
const responseCodec = messageCodec('envoy.service.discovery.v3.DiscoveryResponse');
/** A type the server does not serve: requests of it are logged and never answered. */
const BARRIER_TYPE = 'type.googleapis.com/spec.Barrier';
let barriers = 0;

export interface RequestFields {
  typeUrl: string;
  resourceNames?: readonly string[];
  versionInfo?: string;
  responseNonce?: string;
  errorDetail?: { code: number; message: string };
  nodeId?: string;
}

export class AdsTestClient {
  private readonly responses: DiscoveryResponse[] = [];
  private ended: StatusObject | undefined;
  private wake: (() => void) | undefined;

  private constructor(
    private readonly client: Client,
    private readonly call: ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>,
  ) {
    call.on('data', (response: DiscoveryResponse) => {
      this.responses.push(response);
      this.wake?.();
    });
    call.on('status', (status: StatusObject) => {
      this.ended = status;
      this.wake?.();
    });
    // The status event carries the outcome; without a listener an error would be thrown.
    call.on('error', () => {});
  }

  static open(address: string): AdsTestClient {
    const client = new Client(address, credentials.createInsecure());
    const call = client.makeBidiStreamRequest(
      ADS_METHOD_PATH,
      (request: DiscoveryRequest) => Buffer.from(requestCodec.encode(request)),
      (bytes: Buffer) => responseCodec.decode(bytes),
    );
    return new AdsTestClient(client, call);
  }

  send(fields: RequestFields): void {
    this.call.write({
      typeUrl: fields.typeUrl,
      resourceNames: [...(fields.resourceNames ?? [])],
      versionInfo: fields.versionInfo ?? '',
      responseNonce: fields.responseNonce ?? '',
      errorDetail: fields.errorDetail ? { ...fields.errorDetail, details: [] } : null,
      node: fields.nodeId === undefined ? null : nodeWithId(fields.nodeId),
      resourceLocators: [],
    });
  }

  /** ACKs a response: its version and nonce, with the given names. */
  ack(response: DiscoveryResponse, resourceNames: readonly string[]): void {
    this.send({
      typeUrl: response.typeUrl,
      resourceNames,
      versionInfo: response.versionInfo,
      responseNonce: response.nonce,
    });
  }

  /** The next response not yet taken. */
  async next(timeoutMs = EVENT_DEADLINE_MS): Promise<DiscoveryResponse> {
    await this.until(() => this.responses.length > 0 || this.ended !== undefined, timeoutMs);
    const response = this.responses.shift();
    if (response) return response;
    throw new Error(`stream ended (${this.ended?.code}: ${this.ended?.details}) with no response`);
  }

  /**
   * Fails if any response comes before a barrier: a request of a type the server does not
   * serve (logged, never answered, no subscription touched), and, once the server has logged
   * it, a crafted response to this stream alone. The server answers a request as it logs it
   * and pushes as resources are set, and a stream keeps its order: a response owed for anything
   * before the barrier arrives before it.
   */
  async expectNoResponse(server: ManagementServer): Promise<void> {
    const token = `barrier-${++barriers}`;
    this.send({ typeUrl: BARRIER_TYPE, resourceNames: [token] });
    const { streamId } = await server.waitForRequest(
      (r) => r.typeUrl === BARRIER_TYPE && r.resourceNames[0] === token,
    );
    server.sendRaw({ typeUrl: BARRIER_TYPE, nonce: token, resources: [] }, streamId);
    const unexpected: DiscoveryResponse[] = [];
    for (;;) {
      const response = await this.next();
      if (response.typeUrl === BARRIER_TYPE && response.nonce === token) break;
      unexpected.push(response);
    }
    if (unexpected.length > 0) {
      const names = unexpected.map((r) => `${r.typeUrl} v${r.versionInfo}`).join(', ');
      throw new Error(`expected no response, got: ${names}`);
    }
  }

  /** The status the stream ended with. */
  async status(timeoutMs = EVENT_DEADLINE_MS): Promise<StatusObject> {
    await this.until(() => this.ended !== undefined, timeoutMs);
    return this.ended!;
  }

  /** Responses received and not yet taken. */
  get pending(): readonly DiscoveryResponse[] {
    return this.responses;
  }

  close(): void {
    this.call.cancel();
    this.client.close();
  }

  private async until(done: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`nothing from the server within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = realSetTimeout(resolve, left);
        this.wake = () => {
          realClearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }
}

function nodeWithId(id: string): DiscoveryRequest['node'] {
  return {
    id,
    cluster: 'spec-cluster',
    metadata: null,
    locality: null,
    userAgentName: 'ads-test-client',
    userAgentVersion: null,
    userAgentBuildVersion: null,
    clientFeatures: ['envoy.lb.does_not_support_overprovisioning'],
  };
}

/** The names of a response's resources: `name`, or `cluster_name` for endpoints. */
export function resourceNames(response: DiscoveryResponse): string[] {
  return response.resources.map((any) => {
    const type = lookupMessageType(typeNameOfUrl(any.type_url));
    if (!type) throw new Error(`unknown resource type ${any.type_url}`);
    const message = type.decode(any.value) as unknown as { name?: string; clusterName?: string };
    return message.name ?? message.clusterName ?? '';
  });
}
