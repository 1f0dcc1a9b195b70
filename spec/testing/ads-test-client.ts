// A bare ADS client for testing the management server itself: one grpc-js bidi call, requests
// written by hand, responses queued for the spec to take in order with a deadline. It knows no
// xDS rules, so the server's behaviour is what the specs see.
import { Client, credentials, type ClientDuplexStream, type StatusObject } from '@grpc/grpc-js';
import { lookupMessageType, messageCodec, typeNameOfUrl } from '../../lib/codec';
import type { DiscoveryRequest, DiscoveryResponse } from '../../lib/generated/protos';
import { ADS_METHOD_PATH } from '../../lib/testing';
import { EVENT_DEADLINE_MS, EXPECT_NOTHING_MS } from '../helpers/constants';

const requestCodec = messageCodec('envoy.service.discovery.v3.DiscoveryRequest');
const responseCodec = messageCodec('envoy.service.discovery.v3.DiscoveryResponse');

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

  /** Fails if a response arrives within `ms`. */
  async expectNoResponse(ms = EXPECT_NOTHING_MS): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    if (this.responses.length > 0) {
      const names = this.responses.map((r) => `${r.typeUrl} v${r.versionInfo}`).join(', ');
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
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
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
