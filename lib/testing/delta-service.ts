// The DeltaAggregatedResources side of the ManagementServer: incremental ADS from the same
// resource store as SotW. Per stream and type it tracks what the client subscribed to and
// which version of each resource the client holds, and sends only what differs: changed
// resources, and removed_resources for names that are gone (or never existed), as the
// protocol document's "Incremental xDS" describes and go-control-plane's delta server does.
import type { ServerDuplexStream } from '@grpc/grpc-js';
import { bidiMethod } from './grpc-method';
import type { DeltaDiscoveryRequest, DeltaDiscoveryResponse, Resource } from '../generated/protos';
import { recordDeltaRequest, type RecordedDeltaRequest, type RecordedResponse } from './recorder';
import { wrapResource } from './resource-wrapper';
import { shortTypeName } from './resource-types';
import { StreamService } from './stream-service';
import { StreamSession } from './stream-session';

export const DELTA_ADS_METHOD_PATH =
  '/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources';

export const DELTA_ADS_METHOD = bidiMethod(
  DELTA_ADS_METHOD_PATH,
  'envoy.service.discovery.v3.DeltaDiscoveryRequest',
  'envoy.service.discovery.v3.DeltaDiscoveryResponse',
);

export type DeltaCall = ServerDuplexStream<DeltaDiscoveryRequest, DeltaDiscoveryResponse>;

/** One delta resource of a crafted response: `resource` omitted makes it a heartbeat. */
export interface RawDeltaResource {
  name: string;
  version: string;
  /** Serialized resource of the response's type (or another, to test a type mismatch). */
  resource?: { typeUrl: string; value: Uint8Array };
  ttlMs?: number;
}

export interface RawDeltaResponse {
  typeUrl: string;
  /** Default: the server's current version of the type. */
  systemVersionInfo?: string;
  nonce?: string;
  resources?: readonly RawDeltaResource[];
  removedResources?: readonly string[];
}

interface DeltaSubscription {
  readonly names: Set<string>;
  wildcard: boolean;
  /** Per name, the version the client holds; null: it was told the resource is gone. */
  readonly known: Map<string, string | null>;
  /** A response is owed but responses of this type are held. */
  due: boolean;
}

class DeltaSession extends StreamSession<DeltaDiscoveryRequest, DeltaDiscoveryResponse> {
  readonly subscriptions = new Map<string, DeltaSubscription>();

  send(response: DeltaDiscoveryResponse): boolean {
    if (!this.isOpen) return false;
    this.call.write(response);
    return true;
  }
}

export class DeltaService extends StreamService<
  DeltaDiscoveryRequest,
  DeltaDiscoveryResponse,
  DeltaSession,
  RecordedDeltaRequest
> {
  protected newSession(id: number, call: DeltaCall, fault: DeltaSession['fault']): DeltaSession {
    return new DeltaSession(id, call, fault);
  }

  protected record(streamId: number, request: DeltaDiscoveryRequest): RecordedDeltaRequest {
    return recordDeltaRequest(streamId, request);
  }

  /**
   * The store changed for the type (only the resource `only`, when given): tell every stream
   * what differs. Looking at the one changed name keeps a one-resource change O(1) in the
   * number of resources, as a delta server should.
   */
  push(typeUrl: string, only?: string): void {
    for (const session of this.sessions.values()) {
      if (session.subscriptions.has(typeUrl)) this.respond(session, typeUrl, only);
    }
  }

  /** Heartbeats for the TTL'd resources (of `names`, default all) each stream holds now. */
  sendHeartbeats(typeUrl: string, names: ReadonlySet<string> | undefined): void {
    for (const session of this.sessions.values()) {
      const subscription = session.subscriptions.get(typeUrl);
      if (!subscription) continue;
      const beats: Resource[] = [];
      for (const [name, version] of subscription.known) {
        const resource = this.host.store.get(typeUrl, name);
        if (!resource || resource.ttlMs === undefined || resource.version !== version) continue;
        if (names && !names.has(name)) continue;
        beats.push(wrapResource(typeUrl, resource, true));
      }
      if (beats.length > 0) this.write(session, typeUrl, beats, [], { heartbeats: true });
    }
  }

  /** A crafted response to every open stream, or to one; nothing is checked. */
  sendRaw(response: RawDeltaResponse, streamId?: number): string[] {
    const open = [...this.sessions.values()].filter((s) => s.isOpen);
    const targets = streamId === undefined ? open : open.filter((s) => s.id === streamId);
    if (targets.length === 0) {
      throw new Error(
        `sendRawDelta: no ${streamId === undefined ? '' : 'such '}delta stream is open`,
      );
    }
    const resources = (response.resources ?? []).map(
      (r) =>
        ({
          name: r.name,
          aliases: [],
          version: r.version,
          resource: r.resource ? { type_url: r.resource.typeUrl, value: r.resource.value } : null,
          ttl:
            r.ttlMs === undefined
              ? null
              : { seconds: Math.floor(r.ttlMs / 1000), nanos: (r.ttlMs % 1000) * 1e6 },
          cacheControl: null,
          metadata: null,
        }) as unknown as Resource,
    );
    return targets.map((session) =>
      this.write(session, response.typeUrl, resources, response.removedResources ?? [], {
        nonce: response.nonce,
        systemVersionInfo: response.systemVersionInfo,
        heartbeats: false,
      }),
    );
  }

  /**
   * Subscription changes count whatever the nonce (the protocol says a stale nonce must not
   * make the server ignore them); an ACK or NACK alone asks for nothing.
   */
  protected apply(session: DeltaSession, request: DeltaDiscoveryRequest): void {
    const { typeUrl } = request;
    let subscription = session.subscriptions.get(typeUrl);
    const firstOfType = subscription === undefined;
    if (!subscription) {
      subscription = { names: new Set(), wildcard: false, known: new Map(), due: false };
      session.subscriptions.set(typeUrl, subscription);
      // What the client already holds, from an earlier stream: not sent again if unchanged.
      for (const [name, version] of Object.entries(request.initialResourceVersions)) {
        subscription.known.set(name, version);
      }
      // Legacy wildcard: a first request that names nothing.
      if (
        request.resourceNamesSubscribe.length === 0 &&
        request.resourceNamesUnsubscribe.length === 0
      ) {
        subscription.wildcard = true;
      }
    }
    if (request.errorDetail) {
      this.host.log(
        `stream ${session.id}: ${shortTypeName(typeUrl)}: NACK of nonce ` +
          `${request.responseNonce}: ${request.errorDetail.message}`,
      );
    }
    for (const name of request.resourceNamesSubscribe) {
      if (name === '*') subscription.wildcard = true;
      else subscription.names.add(name);
      // A name subscribed again must be sent again, even at a version the client had.
      if (!firstOfType) subscription.known.delete(name);
    }
    for (const name of request.resourceNamesUnsubscribe) {
      if (name === '*') subscription.wildcard = false;
      subscription.names.delete(name);
      subscription.known.delete(name);
    }
    if (!this.host.store.serves(typeUrl)) {
      this.host.log(`stream ${session.id}: ${shortTypeName(typeUrl)}: unknown type, not answered`);
      return;
    }
    this.respond(session, typeUrl);
  }

  /** Sends the resources whose version the client does not hold, and the names now gone. */
  protected respond(session: DeltaSession, typeUrl: string, only?: string): void {
    const subscription = session.subscriptions.get(typeUrl);
    if (!subscription || !session.isOpen) return;
    if (this.host.isHeld(typeUrl)) {
      subscription.due = true;
      return;
    }
    subscription.due = false;
    const { store } = this.host;
    const candidates = new Set<string>();
    if (only !== undefined) {
      if (subscription.wildcard || subscription.names.has(only)) candidates.add(only);
    } else {
      for (const name of subscription.names) candidates.add(name);
    }
    if (subscription.wildcard && only === undefined) {
      for (const name of store.names(typeUrl)) candidates.add(name);
      for (const name of subscription.known.keys()) candidates.add(name);
    }
    const resources: Resource[] = [];
    const removed: string[] = [];
    for (const name of candidates) {
      const resource = store.get(typeUrl, name);
      const known = subscription.known.get(name);
      if (resource) {
        if (known === resource.version) continue;
        resources.push(wrapResource(typeUrl, resource));
        subscription.known.set(name, resource.version);
      } else if (known !== null) {
        removed.push(name);
        subscription.known.set(name, null);
      }
    }
    if (resources.length === 0 && removed.length === 0) return;
    this.write(session, typeUrl, resources, removed, { heartbeats: false });
  }

  private write(
    session: DeltaSession,
    typeUrl: string,
    resources: readonly Resource[],
    removed: readonly string[],
    options: {
      nonce?: string | undefined;
      systemVersionInfo?: string | undefined;
      heartbeats: boolean;
    },
  ): string {
    const nonce = options.nonce ?? this.host.nextNonce();
    const systemVersionInfo = options.systemVersionInfo ?? this.host.store.version(typeUrl);
    const sent = session.send({
      systemVersionInfo,
      resources,
      typeUrl,
      removedResources: removed,
      nonce,
      controlPlane: null,
    });
    if (!sent) return nonce;
    const names = resources.map((r) => r.name);
    const recorded: { -readonly [K in keyof RecordedResponse]: RecordedResponse[K] } = {
      streamId: session.id,
      typeUrl,
      versionInfo: systemVersionInfo,
      nonce,
      resourceNames: Object.freeze(names),
      removedResources: Object.freeze([...removed]),
      sentAt: Date.now(),
    };
    const beats = options.heartbeats
      ? names
      : resources.filter((r) => r.resource === null).map((r) => r.name);
    if (beats.length > 0) recorded.heartbeats = Object.freeze(beats);
    this.host.recordResponse(Object.freeze(recorded));
    return nonce;
  }
}
