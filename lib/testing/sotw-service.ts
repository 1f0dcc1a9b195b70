// The StreamAggregatedResources side of the ManagementServer: state-of-the-world ADS, with the
// rules of go-control-plane's SotW server (ads-session.ts) over the shared resource store.
import type { Any, DiscoveryRequest, DiscoveryResponse } from '../generated/protos';
import { AdsSession, type AdsCall } from './ads-session';
import { bidiMethod } from './grpc-method';
import { toMessageBytes } from './json-message';
import { recordRequest, type RecordedRequest } from './recorder';
import { nameOfBytes, type ResourceJson } from './resource-store';
import { shortTypeName } from './resource-types';
import { sotwEntry } from './resource-wrapper';
import { StreamService } from './stream-service';

export const ADS_METHOD_PATH =
  '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';

export const ADS_METHOD = bidiMethod(
  ADS_METHOD_PATH,
  'envoy.service.discovery.v3.DiscoveryRequest',
  'envoy.service.discovery.v3.DiscoveryResponse',
);

/** One resource of a crafted response: raw bytes, or JSON encoded as the message `typeUrl` names. */
export type RawResource =
  { typeUrl: string; value: Uint8Array } | { typeUrl: string; json: ResourceJson };

export interface RawResponse {
  typeUrl: string;
  /** Default: the server's current version of the type ('' for a type it does not serve). */
  versionInfo?: string;
  /** Default: a fresh nonce per stream. */
  nonce?: string;
  resources: readonly RawResource[];
}

export class SotwService extends StreamService<
  DiscoveryRequest,
  DiscoveryResponse,
  AdsSession,
  RecordedRequest
> {
  protected newSession(id: number, call: AdsCall, fault: AdsSession['fault']): AdsSession {
    return new AdsSession(id, call, fault);
  }

  protected record(streamId: number, request: DiscoveryRequest): RecordedRequest {
    return recordRequest(streamId, request);
  }

  /** The store changed for the type: every subscribed stream gets the type's new state. */
  push(typeUrl: string): void {
    for (const session of this.sessions.values()) {
      if (session.isSubscribed(typeUrl)) this.respond(session, typeUrl);
    }
  }

  /** The type's usual response, with its TTL'd resources (of `names`) as heartbeats. */
  sendHeartbeats(typeUrl: string, names: ReadonlySet<string> | undefined): void {
    for (const session of this.sessions.values()) {
      if (session.isSubscribed(typeUrl)) this.respond(session, typeUrl, names ?? 'all');
    }
  }

  sendRaw(response: RawResponse, streamId?: number): string[] {
    const targets = this.rawTargets(streamId);
    const resources: Any[] = [];
    const names: string[] = [];
    response.resources.forEach((resource, index) => {
      const value =
        'value' in resource
          ? resource.value
          : toMessageBytes(resource.typeUrl, resource.json, { path: `resources[${index}].json` });
      resources.push({ type_url: resource.typeUrl, value });
      names.push(nameOfBytes(resource.typeUrl, value));
    });
    const versionInfo = response.versionInfo ?? this.host.store.version(response.typeUrl);
    return targets.map((session) => {
      const nonce = response.nonce ?? this.host.nextNonce();
      this.write(session, { typeUrl: response.typeUrl, versionInfo, nonce, resources }, names);
      return nonce;
    });
  }

  protected apply(session: AdsSession, request: DiscoveryRequest): void {
    const type = shortTypeName(request.typeUrl);
    if (!this.host.store.serves(request.typeUrl)) {
      this.host.log(`stream ${session.id}: ${type}: unknown type, not answered`);
      return;
    }
    const verdict = session.applyRequest(request);
    if (verdict === 'stale') {
      this.host.log(`stream ${session.id}: ${type}: stale nonce ${request.responseNonce}, ignored`);
    } else if (verdict === 'changed') {
      this.respond(session, request.typeUrl);
    }
  }

  /**
   * Sends the type's current version of the resources the stream asked for; `heartbeats`
   * sends those TTL'd resources as heartbeats.
   */
  protected respond(
    session: AdsSession,
    typeUrl: string,
    heartbeats?: ReadonlySet<string> | 'all',
  ): void {
    const subscription = session.subscriptions.get(typeUrl);
    if (!subscription) return;
    // Nothing subscribed (the client dropped its last name): nothing to say.
    if (!subscription.wildcard && subscription.names.size === 0) {
      subscription.due = false;
      return;
    }
    if (this.host.isHeld(typeUrl)) {
      subscription.due = true;
      return;
    }
    const selected = this.host.store.select(typeUrl, subscription.wildcard, subscription.names);
    const beats = selected
      .filter((r) => r.ttlMs !== undefined && heartbeats !== undefined)
      .filter((r) => heartbeats === 'all' || heartbeats!.has(r.name))
      .map((r) => r.name);
    const response = {
      typeUrl,
      versionInfo: this.host.store.version(typeUrl),
      nonce: this.host.nextNonce(),
      resources: selected.map((r) => sotwEntry(typeUrl, r, beats.includes(r.name))),
    };
    this.write(
      session,
      response,
      selected.map((resource) => resource.name),
      beats,
    );
  }

  private write(
    session: AdsSession,
    response: Pick<DiscoveryResponse, 'typeUrl' | 'versionInfo' | 'nonce' | 'resources'>,
    names: readonly string[],
    heartbeats: readonly string[] = [],
  ): void {
    const sent = session.send({ ...response, canary: false, controlPlane: null });
    if (!sent) return;
    this.host.recordResponse(
      Object.freeze({
        streamId: session.id,
        typeUrl: response.typeUrl,
        versionInfo: response.versionInfo,
        nonce: response.nonce,
        resourceNames: Object.freeze([...names]),
        ...(heartbeats.length > 0 && { heartbeats: Object.freeze([...heartbeats]) }),
        sentAt: Date.now(),
      }),
    );
  }

  private rawTargets(streamId: number | undefined): AdsSession[] {
    const open = [...this.sessions.values()].filter((session) => session.isOpen);
    const targets = streamId === undefined ? open : open.filter((s) => s.id === streamId);
    if (targets.length === 0) {
      const ids = open.map((s) => s.id).join(', ') || 'none';
      const which = streamId === undefined ? 'no stream is open' : `stream ${streamId} is not open`;
      throw new Error(`sendRaw: ${which} (open streams: ${ids})`);
    }
    return targets;
  }
}
