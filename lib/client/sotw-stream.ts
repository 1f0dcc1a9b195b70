import { messageCodec } from '../codec';
import {
  AdsStream,
  trace,
  type ResponseVerdict,
  type SentRequest,
  type TypeStateBase,
} from './ads-stream';
import { scanResponse, type ResponseShape } from './response-scan';

const requestCodec = messageCodec('envoy.service.discovery.v3.DiscoveryRequest');
const responseCodec = messageCodec('envoy.service.discovery.v3.DiscoveryResponse');

interface SotwTypeState<Memo> extends TypeStateBase {
  /** Last ACKed version: kept across streams, sent on the first request of the next one. */
  version: string;
  /**
   * The last response of this type on this stream, if it was ACKed: its resources' bytes and
   * its verdict's memo. The one record of what an unchanged re-send would confirm.
   */
  lastAcked: { readonly resources: Uint8Array; readonly memo: Memo } | undefined;
  /** A name was subscribed or dropped since the last response was processed. */
  namesChanged: boolean;
}

/**
 * State-of-the-world ADS (StreamAggregatedResources): every request carries the type's whole
 * name list and last ACKed version; an unchanged re-send is recognised before decoding
 * (decision 0008).
 */
export class SotwAdsStream<Memo> extends AdsStream<Memo, SotwTypeState<Memo>> {
  protected newTypeState(): SotwTypeState<Memo> {
    return {
      names: new Set(),
      version: '',
      nonce: '',
      nack: undefined,
      dirty: false,
      sentOnStream: false,
      lastAcked: undefined,
      namesChanged: false,
    };
  }

  protected nameAdded(state: SotwTypeState<Memo>): void {
    state.namesChanged = true;
  }

  protected nameRemoved(state: SotwTypeState<Memo>): void {
    state.namesChanged = true;
  }

  protected resetForStream(state: SotwTypeState<Memo>): void {
    state.lastAcked = undefined;
  }

  protected send(typeUrl: string, state: SotwTypeState<Memo>): void {
    const sent: SentRequest = {
      typeUrl,
      resourceNames: [...state.names],
      versionInfo: state.version,
      responseNonce: state.nonce,
      errorDetail: state.nack,
    };
    const bytes = requestCodec.encode({
      versionInfo: sent.versionInfo,
      node: this.nodeSent ? null : this.node,
      resourceNames: sent.resourceNames,
      typeUrl,
      responseNonce: sent.responseNonce,
      errorDetail: AdsStream.errorDetail(sent.errorDetail),
    } as never);
    if (trace.enabled) {
      trace.log(
        `${this.server.serverUri}: request ${typeUrl} [${sent.resourceNames.join(', ')}] ` +
          `version="${sent.versionInfo}" nonce="${sent.responseNonce}"` +
          (sent.errorDetail === undefined ? '' : ` NACK: ${sent.errorDetail}`),
      );
    }
    this.write(state, bytes, sent);
  }

  protected onMessage(bytes: Uint8Array): void {
    const shape = scanResponse(bytes);
    if (shape && this.tryUnchanged(shape)) return;
    const response = this.decodeResponse(responseCodec, bytes);
    if (!response) return;
    const state = this.types.get(response.typeUrl);
    // Watches started by callbacks during onResponse count as changes after this response.
    if (state) state.namesChanged = false;
    const verdict = this.events.onResponse({
      protocol: 'sotw',
      typeUrl: response.typeUrl,
      versionInfo: response.versionInfo,
      nonce: response.nonce,
      resources: response.resources,
    });
    if (verdict === undefined || !this.live || !state) return;
    // Kept to recognise an identical re-send (a copy: the message buffer is grpc-js's).
    state.lastAcked =
      verdict.nack === undefined &&
      verdict.memo !== undefined &&
      shape?.typeUrl === response.typeUrl
        ? { resources: Buffer.from(shape.resources), memo: verdict.memo }
        : undefined;
    this.answerSotw(state, response.nonce, response.versionInfo, verdict);
  }

  /** The fast path for a re-sent, unchanged response (see onUnchangedResponse). */
  private tryUnchanged(shape: ResponseShape): boolean {
    const state = this.types.get(shape.typeUrl);
    const last = state?.lastAcked;
    if (!state || !last || state.namesChanged) return false;
    const bytes = last.resources;
    if (bytes.length !== shape.resources.length || Buffer.compare(bytes, shape.resources) !== 0) {
      return false;
    }
    if (!this.markResponse()) return true;
    if (!this.events.onUnchangedResponse(shape, last.memo)) return false;
    if (!this.live) return true;
    this.answerSotw(state, shape.nonce, shape.versionInfo, { applied: true });
    return true;
  }

  private answerSotw(
    state: SotwTypeState<Memo>,
    nonce: string,
    version: string,
    verdict: ResponseVerdict<Memo>,
  ): void {
    if (verdict.nack === undefined || verdict.applied) state.version = version;
    this.answer(state, nonce, verdict.nack);
  }
}
