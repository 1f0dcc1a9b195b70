import { messageCodec } from '../../codec';
import {
  AdsStream,
  trace,
  type ConfirmedEntry,
  type ResponseVerdict,
  type SentRequest,
  type TypeStateBase,
} from './ads-stream';
import { scanResponse, type ResponseShape } from './response-scan';

const requestCodec = messageCodec('envoy.service.discovery.v3.DiscoveryRequest');
const responseCodec = messageCodec('envoy.service.discovery.v3.DiscoveryResponse');

interface SotwTypeState extends TypeStateBase {
  /** Last ACKed version: kept across streams, sent on the first request of the next one. */
  version: string;
  /**
   * The last response of this type on this stream, if it was ACKed: its resources' bytes and
   * its verdict's memo. The one record of what an unchanged re-send would confirm.
   */
  lastAcked:
    { readonly resources: Uint8Array; readonly memo: readonly ConfirmedEntry[] } | undefined;
  /** A name was subscribed or dropped since the last response was processed. */
  namesChanged: boolean;
  /**
   * The name list and its encoded `resource_names` field, kept until a name changes: every ACK
   * of a type repeats its whole name list, thousands of names for a large mesh.
   */
  namesCache: { readonly list: readonly string[]; readonly bytes: Uint8Array } | undefined;
  /**
   * The name list of the last request written on this stream (namesCache's list, kept until a
   * name changes): a request with the same list names nothing new to the stream.
   */
  writtenNames: readonly string[] | undefined;
}

/**
 * State-of-the-world ADS (StreamAggregatedResources): every request carries the type's whole
 * name list and last ACKed version; an unchanged re-send is recognised before decoding
 * (decision 0008).
 */
export class SotwAdsStream extends AdsStream<SotwTypeState> {
  protected newTypeState(): SotwTypeState {
    return {
      names: new Set(),
      version: '',
      nonce: '',
      nack: undefined,
      dirty: false,
      sentOnStream: false,
      lastAcked: undefined,
      namesChanged: false,
      namesCache: undefined,
      writtenNames: undefined,
    };
  }

  protected nameAdded(state: SotwTypeState): void {
    state.namesChanged = true;
    state.namesCache = undefined;
  }

  protected nameRemoved(state: SotwTypeState): void {
    state.namesChanged = true;
    state.namesCache = undefined;
  }

  private namesOf(state: SotwTypeState): NonNullable<SotwTypeState['namesCache']> {
    if (!state.namesCache) {
      const list = Object.freeze([...state.names]);
      // Only the repeated field is set, so these are exactly its bytes in any request.
      const bytes = requestCodec.encode({ resourceNames: list } as never);
      state.namesCache = { list, bytes };
    }
    return state.namesCache;
  }

  protected resetForStream(state: SotwTypeState): void {
    state.lastAcked = undefined;
    state.writtenNames = undefined;
  }

  protected send(typeUrl: string, state: SotwTypeState): void {
    const names = this.namesOf(state);
    const sent: SentRequest = {
      typeUrl,
      resourceNames: names.list,
      versionInfo: state.version,
      responseNonce: state.nonce,
      errorDetail: state.nack,
    };
    const rest = requestCodec.encode({
      versionInfo: sent.versionInfo,
      node: this.nodeSent ? null : this.node,
      typeUrl,
      responseNonce: sent.responseNonce,
      errorDetail: AdsStream.errorDetail(sent.errorDetail),
    } as never);
    // A message's fields may come in any order: the cached names are appended as they are.
    const bytes = concatBytes(rest, names.bytes);
    if (trace.enabled) {
      trace.log(
        `${this.server.serverUri}: request ${typeUrl} [${sent.resourceNames.join(', ')}] ` +
          `version="${sent.versionInfo}" nonce="${sent.responseNonce}"` +
          (sent.errorDetail === undefined ? '' : ` NACK: ${sent.errorDetail}`),
      );
    }
    // An ACK or NACK with the list already written on this stream starts no timer: walking its
    // thousands of names for nothing was ~7 % of a large response's cost (decision 0092).
    const newlyNamed = names.list === state.writtenNames ? [] : names.list;
    state.writtenNames = names.list;
    this.write(state, bytes, sent, newlyNamed);
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
    state: SotwTypeState,
    nonce: string,
    version: string,
    verdict: ResponseVerdict,
  ): void {
    if (verdict.nack === undefined || verdict.applied) state.version = version;
    this.answer(state, nonce, verdict.nack);
  }
}

function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
