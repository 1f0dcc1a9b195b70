import { status } from '@grpc/grpc-js';
import type { XdsServerConfig } from '../bootstrap';
import { messageCodec } from '../codec';
import type { DiscoveryResponse, Node } from '../generated/protos';
import { tracer } from '../trace';
import { Backoff } from './backoff';
import { XdsError } from '../errors';
import { scanResponse, type ResponseShape } from './response-scan';
import type { AdsCall, XdsTransport } from './transport';

const trace = tracer('xds_ads');
const requestCodec = messageCodec('envoy.service.discovery.v3.DiscoveryRequest');
const responseCodec = messageCodec('envoy.service.discovery.v3.DiscoveryResponse');

/** What a DiscoveryRequest said, for events and for starting does-not-exist timers. */
export interface SentRequest {
  readonly typeUrl: string;
  readonly resourceNames: readonly string[];
  readonly versionInfo: string;
  readonly responseNonce: string;
  /** Set on a NACK. */
  readonly errorDetail: string | undefined;
}

/** How the client judged a response: ACK, or NACK with every problem in one message. */
export interface ResponseVerdict<Memo = unknown> {
  /** Set to NACK the response. */
  readonly nack?: string;
  /**
   * On a NACK: whether at least one resource was applied. Then the NACK carries the response's
   * version (gRFC A46, C-core's rule); otherwise the last ACKed one.
   */
  readonly applied: boolean;
  /**
   * What the client wants back if this response, once ACKed, is re-sent unchanged (the cache
   * entries it set or confirmed). Kept beside the response's bytes, and forgotten with them.
   */
  readonly memo?: Memo;
}

/** The AdsStream reports upward through these, and knows nothing else of the client. */
export interface AdsStreamEvents<Memo> {
  /** A response arrived. `undefined` means its type is unknown: neither ACK nor NACK. */
  onResponse(response: DiscoveryResponse): ResponseVerdict<Memo> | undefined;
  /**
   * A response arrived whose resources are byte-for-byte those of the last response of its type
   * on this stream, which was ACKed, and no name was subscribed or dropped since: it would
   * change nothing but versions. `memo` is the one that response's verdict carried. Returns
   * false to have it decoded and processed normally.
   */
  onUnchangedResponse(response: ResponseShape, memo: Memo): boolean;
  /** The first response of a stream arrived: the server is reachable and talking. */
  onConnected(): void;
  /** A request was handed to the wire on the current stream. */
  onRequestWritten(request: SentRequest): void;
  /**
   * The stream ended. `error` is set when it failed before any response (gRFC A57): a
   * connectivity problem. A stream that ends after a response is normal and has no error.
   */
  onStreamEnded(error: XdsError | undefined, hadResponse: boolean): void;
}

interface TypeState<Memo> {
  readonly names: Set<string>;
  /** Last ACKed version: kept across streams, sent on the first request of the next one. */
  version: string;
  /** Last nonce received on this stream. */
  nonce: string;
  /** A NACK message to send once, on the next request of this type. */
  nack: string | undefined;
  dirty: boolean;
  /** A request of this type went out on this stream (so an empty name list means "none"). */
  sentOnStream: boolean;
  /**
   * The last response of this type on this stream, if it was ACKed: its resources' bytes and
   * its verdict's memo. The one record of what an unchanged re-send would confirm.
   */
  lastAcked: { readonly resources: Uint8Array; readonly memo: Memo } | undefined;
  /** A name was subscribed or dropped since the last response was processed. */
  namesChanged: boolean;
}

/**
 * One StreamAggregatedResources call to one xDS server, all types multiplexed, and its
 * replacement when it ends. Owns the per-type protocol state: subscribed names, last ACKed
 * version, nonce. Subscription changes made in one tick go out as one request per type.
 */
export class AdsStream<Memo> {
  private readonly types = new Map<string, TypeState<Memo>>();
  private call: AdsCall | undefined;
  private hadResponse = false;
  private nodeSent = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDue = 0;
  private flushQueued = false;
  private closed = false;

  constructor(
    readonly server: XdsServerConfig,
    private readonly transport: XdsTransport,
    private readonly node: Node,
    private readonly backoff: Backoff,
    private readonly nodeId: string,
    private readonly events: AdsStreamEvents<Memo>,
    /** No stream starts before this time (ms since epoch): a predecessor's pending backoff. */
    private readonly notBefore = 0,
  ) {}

  /** When the next stream is due, while one is waiting for its backoff; else 0. */
  get retryAt(): number {
    return this.retryTimer ? this.retryDue : 0;
  }

  subscribe(typeUrl: string, name: string): void {
    let state = this.types.get(typeUrl);
    if (!state) {
      state = {
        names: new Set(),
        version: '',
        nonce: '',
        nack: undefined,
        dirty: false,
        sentOnStream: false,
        lastAcked: undefined,
        namesChanged: false,
      };
      this.types.set(typeUrl, state);
    }
    if (state.names.has(name)) return;
    state.names.add(name);
    state.dirty = true;
    state.namesChanged = true;
    this.queueFlush();
  }

  unsubscribe(typeUrl: string, name: string): void {
    const state = this.types.get(typeUrl);
    if (!state?.names.delete(name)) return;
    state.dirty = true;
    state.namesChanged = true;
    this.queueFlush();
  }

  /** Ends the stream for good; no event is reported afterwards. */
  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.call?.cancel();
    this.call = undefined;
  }

  /** Sends pending subscription changes now rather than at the end of the tick. */
  flushNow(): void {
    this.flush();
  }

  private queueFlush(): void {
    if (this.flushQueued || this.closed) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      this.flush();
    });
  }

  private start(): void {
    this.hadResponse = false;
    this.nodeSent = false;
    for (const state of this.types.values()) {
      state.nonce = '';
      state.nack = undefined;
      state.sentOnStream = false;
      state.lastAcked = undefined;
      state.dirty = state.names.size > 0;
    }
    if (trace.enabled) trace.log(`${this.server.serverUri}: starting ADS stream`);
    const call: AdsCall = this.transport.startAdsCall({
      onMessage: (bytes) => {
        if (this.call === call) this.onMessage(bytes);
      },
      onEnd: (code, details) => {
        if (this.call === call) this.onEnd(code, details);
      },
    });
    this.call = call;
    this.flush();
  }

  /** Sends one request for every type whose subscriptions or ACK state changed. */
  private flush(): void {
    if (this.closed) return;
    if (!this.call) {
      if (!this.retryTimer && [...this.types.values()].some((s) => s.dirty)) {
        const wait = this.notBefore - Date.now();
        if (wait > 0) this.startAfter(wait);
        else this.start();
      }
      return;
    }
    for (const [typeUrl, state] of this.types) {
      if (!state.dirty) continue;
      state.dirty = false;
      // An empty list on a type never requested on this stream would be a wildcard request.
      if (state.names.size === 0 && !state.sentOnStream) continue;
      this.send(typeUrl, state);
    }
  }

  private send(typeUrl: string, state: TypeState<Memo>): void {
    const call = this.call!;
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
      errorDetail:
        sent.errorDetail === undefined
          ? null
          : { code: status.INVALID_ARGUMENT, message: sent.errorDetail, details: [] },
    } as never);
    this.nodeSent = true;
    state.sentOnStream = true;
    state.nack = undefined; // a NACK is sent once, never repeated on later requests
    if (trace.enabled) {
      trace.log(
        `${this.server.serverUri}: request ${typeUrl} [${sent.resourceNames.join(', ')}] ` +
          `version="${sent.versionInfo}" nonce="${sent.responseNonce}"` +
          (sent.errorDetail === undefined ? '' : ` NACK: ${sent.errorDetail}`),
      );
    }
    call.write(bytes, () => {
      if (this.call === call) this.events.onRequestWritten(sent);
    });
  }

  private onMessage(bytes: Uint8Array): void {
    const shape = scanResponse(bytes);
    if (shape && this.tryUnchanged(shape)) return;
    let response: DiscoveryResponse;
    try {
      response = responseCodec.decode(bytes);
    } catch (e) {
      // Without a type URL and nonce there is nothing to NACK; the stream carries on.
      if (trace.enabled) trace.log(`${this.server.serverUri}: undecodable response: ${String(e)}`);
      return;
    }
    if (!this.markResponse()) return;
    const state = this.types.get(response.typeUrl);
    // Watches started by callbacks during onResponse count as changes after this response.
    if (state) state.namesChanged = false;
    const verdict = this.events.onResponse(response);
    if (verdict === undefined || this.closed || !this.call || !state) return;
    // Kept to recognise an identical re-send (a copy: the message buffer is grpc-js's).
    state.lastAcked =
      verdict.nack === undefined &&
      verdict.memo !== undefined &&
      shape?.typeUrl === response.typeUrl
        ? { resources: Buffer.from(shape.resources), memo: verdict.memo }
        : undefined;
    this.answer(state, response.nonce, response.versionInfo, verdict);
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
    if (this.closed || !this.call) return true;
    this.answer(state, shape.nonce, shape.versionInfo, { applied: true });
    return true;
  }

  /** Notes that the stream has had a response; false if the stream was closed meanwhile. */
  private markResponse(): boolean {
    if (!this.hadResponse) {
      this.hadResponse = true;
      this.events.onConnected();
    }
    return !this.closed;
  }

  /** Records the ACK or NACK and sends it, with any subscription changes callbacks made. */
  private answer(
    state: TypeState<Memo>,
    nonce: string,
    version: string,
    verdict: ResponseVerdict<Memo>,
  ) {
    state.nonce = nonce;
    if (verdict.nack === undefined || verdict.applied) state.version = version;
    state.nack = verdict.nack;
    state.dirty = true;
    // Synchronous: subscriptions made by watcher callbacks during onResponse ride along.
    this.flush();
  }

  private onEnd(code: number, details: string): void {
    const hadResponse = this.hadResponse;
    this.call = undefined;
    let error: XdsError | undefined;
    if (!hadResponse) {
      const what = code === status.OK ? 'closed' : `failed (${status[code] ?? code}: ${details})`;
      error = new XdsError(
        status.UNAVAILABLE,
        `xDS server ${this.server.serverUri}: stream ${what} before any response`,
        { nodeId: this.nodeId },
      );
    }
    if (trace.enabled) {
      trace.log(
        `${this.server.serverUri}: stream ended (${code} ${details}); response seen: ${hadResponse}`,
      );
    }
    // A healthy stream resets the backoff, but the next one still waits the initial delay.
    if (hadResponse) this.backoff.reset();
    this.startAfter(this.backoff.next());
    this.events.onStreamEnded(error, hadResponse);
  }

  private startAfter(delayMs: number): void {
    this.retryDue = Date.now() + delayMs;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.start();
    }, delayMs);
  }
}
