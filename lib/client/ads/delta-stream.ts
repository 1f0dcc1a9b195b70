import { messageCodec } from '../../codec';
import { AdsStream, trace, type SentRequest, type TypeStateBase } from './ads-stream';

const requestCodec = messageCodec('envoy.service.discovery.v3.DeltaDiscoveryRequest');
const responseCodec = messageCodec('envoy.service.discovery.v3.DeltaDiscoveryResponse');

interface DeltaTypeState extends TypeStateBase {
  /** Names to put in the next request's `resource_names_subscribe`. */
  readonly toSubscribe: Set<string>;
  /** Names to put in the next request's `resource_names_unsubscribe`. */
  readonly toUnsubscribe: Set<string>;
}

/**
 * Incremental ADS (DeltaAggregatedResources). A stream's first request of a type subscribes
 * every name and lists the cached resources' versions in `initial_resource_versions`; later
 * ones carry only the names subscribed and dropped since, and the nonce of the response they
 * ACK or NACK. Versions are per resource and live in the cache, not here.
 */
export class DeltaAdsStream extends AdsStream<DeltaTypeState> {
  protected newTypeState(): DeltaTypeState {
    return {
      names: new Set(),
      nonce: '',
      nack: undefined,
      dirty: false,
      sentOnStream: false,
      toSubscribe: new Set(),
      toUnsubscribe: new Set(),
    };
  }

  protected nameAdded(state: DeltaTypeState, name: string): void {
    // Dropped then wanted again before a request went out: it must be subscribed again, since
    // the cache may have let go of it (the server must then send it even if it thinks we have it).
    state.toUnsubscribe.delete(name);
    state.toSubscribe.add(name);
  }

  protected nameRemoved(state: DeltaTypeState, name: string): void {
    state.toSubscribe.delete(name);
    state.toUnsubscribe.add(name);
  }

  protected resetForStream(state: DeltaTypeState): void {
    // The new stream's server knows nothing: the first request says everything again.
    state.toUnsubscribe.clear();
    state.toSubscribe.clear();
    for (const name of state.names) state.toSubscribe.add(name);
  }

  protected send(typeUrl: string, state: DeltaTypeState): void {
    const first = !state.sentOnStream;
    // A first request subscribing nothing would be the legacy wildcard; a later one saying
    // nothing (no change, nothing to ACK) is not worth sending.
    if (first ? state.toSubscribe.size === 0 : isEmpty(state)) return;
    const initialResourceVersions: Record<string, string> = {};
    if (first) {
      for (const [name, version] of this.events.cachedVersions(typeUrl)) {
        if (state.names.has(name)) initialResourceVersions[name] = version;
      }
    }
    const sent: SentRequest = {
      typeUrl,
      resourceNames: [...state.toSubscribe],
      versionInfo: '',
      responseNonce: state.nonce,
      errorDetail: state.nack,
      delta: { unsubscribe: [...state.toUnsubscribe], initialResourceVersions },
    };
    const bytes = requestCodec.encode({
      node: this.nodeSent ? null : this.node,
      typeUrl,
      resourceNamesSubscribe: sent.resourceNames,
      resourceNamesUnsubscribe: sent.delta!.unsubscribe,
      initialResourceVersions,
      responseNonce: sent.responseNonce,
      errorDetail: AdsStream.errorDetail(sent.errorDetail),
    } as never);
    state.toSubscribe.clear();
    state.toUnsubscribe.clear();
    state.nonce = ''; // a nonce is an ACK or NACK: said once, like the NACK itself
    if (trace.enabled) {
      trace.log(
        `${this.server.serverUri}: delta request ${typeUrl} +[${sent.resourceNames.join(', ')}] ` +
          `-[${sent.delta!.unsubscribe.join(', ')}] nonce="${sent.responseNonce}"` +
          (first ? ` initial=${JSON.stringify(initialResourceVersions)}` : '') +
          (sent.errorDetail === undefined ? '' : ` NACK: ${sent.errorDetail}`),
      );
    }
    // Only the names it subscribes to are new to the stream.
    this.write(state, bytes, sent, sent.resourceNames);
  }

  protected onMessage(bytes: Uint8Array): void {
    const response = this.decodeResponse(responseCodec, bytes);
    if (!response) return;
    const state = this.types.get(response.typeUrl);
    const verdict = this.events.onResponse({
      protocol: 'delta',
      typeUrl: response.typeUrl,
      versionInfo: response.systemVersionInfo,
      nonce: response.nonce,
      resources: response.resources,
      removed: response.removedResources,
    });
    if (verdict === undefined || !this.live || !state) return;
    this.answer(state, response.nonce, verdict.nack);
  }
}

function isEmpty(state: DeltaTypeState): boolean {
  return (
    state.toSubscribe.size === 0 &&
    state.toUnsubscribe.size === 0 &&
    state.nonce === '' &&
    state.nack === undefined
  );
}
