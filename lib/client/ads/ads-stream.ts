import { status } from '@grpc/grpc-js';
import type { XdsServerConfig } from '../../bootstrap';
import type { MessageCodec } from '../../codec';
import type { Any, Node, Resource } from '../../generated/protos';
import { tracer } from '../../trace';
import { Backoff } from '../transport/backoff';
import { XdsError } from '../../errors';
import type { ResponseShape } from './response-scan';
import type { AdsCall, XdsTransport } from '../transport/transport';

export const trace = tracer('xds_ads');

/** What a request said, for events and for starting does-not-exist timers. */
export interface SentRequest {
  readonly typeUrl: string;
  /**
   * SotW: every subscribed name. Delta: the names this request subscribes to. Either way, the
   * names whose does-not-exist timers may start once it is written.
   */
  readonly resourceNames: readonly string[];
  /** SotW: the version being ACKed (or kept, on a NACK). Delta: ''. */
  readonly versionInfo: string;
  readonly responseNonce: string;
  /** Set on a NACK. */
  readonly errorDetail: string | undefined;
  /** Delta only: what else the DeltaDiscoveryRequest carried. */
  readonly delta?: DeltaRequestParts;
}

export interface DeltaRequestParts {
  readonly unsubscribe: readonly string[];
  /** Only on a stream's first request of the type: the cached resources' versions. */
  readonly initialResourceVersions: Readonly<Record<string, string>>;
}

/** A response as the client core sees it, whichever protocol carried it. Decoded once. */
export type WireResponse = SotwResponse | DeltaResponse;

export interface SotwResponse {
  readonly protocol: 'sotw';
  readonly typeUrl: string;
  readonly versionInfo: string;
  readonly nonce: string;
  /** Bare resources, or `Resource` wrappers in an Any. */
  readonly resources: readonly Any[];
}

export interface DeltaResponse {
  readonly protocol: 'delta';
  readonly typeUrl: string;
  /** `system_version_info`: for the dump only. */
  readonly versionInfo: string;
  readonly nonce: string;
  readonly resources: readonly Resource[];
  readonly removed: readonly string[];
}

/**
 * What an ACKed response set or confirmed in the client's cache, kept beside the response's
 * bytes: if the response is re-sent unchanged, these entries move to the new version without
 * decoding anything (decision 0008).
 */
export interface ConfirmedEntry {
  readonly name: string;
  markAcked(version: string, now: Date): void;
}

/** How the client judged a response: ACK, or NACK with every problem in one message. */
export interface ResponseVerdict {
  /** Set to NACK the response. */
  readonly nack?: string;
  /**
   * On a NACK: whether at least one resource was applied. Then a SotW NACK carries the
   * response's version (gRFC A46, C-core's rule); otherwise the last ACKed one.
   */
  readonly applied: boolean;
  /**
   * What the client wants back if this response, once ACKed, is re-sent unchanged (the cache
   * entries it set or confirmed). Kept beside the response's bytes, and forgotten with them.
   */
  readonly memo?: readonly ConfirmedEntry[];
}

/** The stream reports upward through these, and knows nothing else of the client. */
export interface AdsStreamEvents {
  /** A response arrived. `undefined` means its type is unknown: neither ACK nor NACK. */
  onResponse(response: WireResponse): ResponseVerdict | undefined;
  /**
   * SotW: a response arrived whose resources are byte-for-byte those of the last response of
   * its type on this stream, which was ACKed, and no name was subscribed or dropped since: it
   * would change nothing but versions. `memo` is the one that response's verdict carried.
   * Returns false to have it decoded and processed normally.
   */
  onUnchangedResponse(response: ResponseShape, memo: readonly ConfirmedEntry[]): boolean;
  /** Delta: the versions of the cached resources of a type, for a stream's first request. */
  cachedVersions(typeUrl: string): ReadonlyMap<string, string>;
  /**
   * The transport could not read what it got for a type (AdsCallHandlers.onRejected): report
   * it as a NACK of the whole type would be reported.
   */
  onRejected(typeUrl: string, message: string): void;
  /** The first response of a stream arrived: the server is reachable and talking. */
  onConnected(): void;
  /**
   * A request was handed to the wire on the current stream. `newlyNamed`: the names whose
   * does-not-exist timers may start now, those no earlier request on the stream carried (a
   * superset will do; see the protocol's `send`).
   */
  onRequestWritten(request: SentRequest, newlyNamed: readonly string[]): void;
  /**
   * The stream ended. `error` is set when it failed before any response (gRFC A57): a
   * connectivity problem. A stream that ends after a response is normal and has no error.
   */
  onStreamEnded(error: XdsError | undefined, hadResponse: boolean): void;
}

/** Per type, what both protocols keep. */
export interface TypeStateBase {
  readonly names: Set<string>;
  /** The nonce to answer with on the next request of the type. */
  nonce: string;
  /** A NACK message to send once, on the next request of this type. */
  nack: string | undefined;
  dirty: boolean;
  /** A request of this type went out on this stream (so an empty name list means "none"). */
  sentOnStream: boolean;
}

/**
 * One ADS call to one xDS server, all types multiplexed, and its replacement when it ends:
 * the part both wire protocols share (the call's life, reconnect with backoff, the node on the
 * first request, one request per type per tick). What a request says and how a response is
 * read is the protocol's: SotwAdsStream (sotw-stream.ts) or DeltaAdsStream (delta-stream.ts).
 */
export abstract class AdsStream<S extends TypeStateBase = TypeStateBase> {
  protected readonly types = new Map<string, S>();
  protected call: AdsCall | undefined;
  private hadResponse = false;
  /** When the current stream started (ms since epoch): how long a healthy stream lived. */
  private startedAt = 0;
  protected nodeSent = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDue = 0;
  private flushQueued = false;
  protected closed = false;

  constructor(
    readonly server: XdsServerConfig,
    private readonly transport: XdsTransport,
    protected readonly node: Node,
    private readonly backoff: Backoff,
    private readonly nodeId: string,
    protected readonly events: AdsStreamEvents,
    /** No stream starts before this time (ms since epoch): a predecessor's pending backoff. */
    private readonly notBefore = 0,
  ) {}

  /** A fresh per-type state, with no names. */
  protected abstract newTypeState(): S;
  /** A name joins the type's set (already added to `names`). */
  protected abstract nameAdded(state: S, name: string): void;
  /** A name leaves the type's set (already removed from `names`). */
  protected abstract nameRemoved(state: S, name: string): void;
  /** A new stream starts: forget what the last one said. */
  protected abstract resetForStream(state: S): void;
  /** Builds and writes the type's request, if it has anything to say. */
  protected abstract send(typeUrl: string, state: S): void;
  /** One serialized response. */
  protected abstract onMessage(bytes: Uint8Array): void;

  /** When the next stream is due, while one is waiting for its backoff; else 0. */
  get retryAt(): number {
    return this.retryTimer ? this.retryDue : 0;
  }

  subscribe(typeUrl: string, name: string): void {
    let state = this.types.get(typeUrl);
    if (!state) {
      state = this.newTypeState();
      this.types.set(typeUrl, state);
    }
    if (state.names.has(name)) return;
    state.names.add(name);
    state.dirty = true;
    this.nameAdded(state, name);
    this.queueFlush();
  }

  unsubscribe(typeUrl: string, name: string): void {
    const state = this.types.get(typeUrl);
    if (!state?.names.delete(name)) return;
    state.dirty = true;
    this.nameRemoved(state, name);
    this.queueFlush();
  }

  /** Whether `name` is subscribed and a request of its type went out on the current stream. */
  isRequested(typeUrl: string, name: string): boolean {
    const state = this.types.get(typeUrl);
    return this.call !== undefined && !!state?.sentOnStream && state.names.has(name);
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
    this.startedAt = Date.now();
    this.nodeSent = false;
    for (const state of this.types.values()) {
      state.nonce = '';
      state.nack = undefined;
      state.sentOnStream = false;
      state.dirty = state.names.size > 0;
      this.resetForStream(state);
    }
    if (trace.enabled) trace.log(`${this.server.serverUri}: starting ADS stream`);
    const call: AdsCall = this.transport.startAdsCall({
      onMessage: (bytes) => {
        if (this.call === call) this.onMessage(bytes);
      },
      onEnd: (code, details) => {
        if (this.call === call) this.onEnd(code, details);
      },
      onRejected: (typeUrl, message) => {
        if (this.call === call) this.rejected(typeUrl, message);
      },
    });
    this.call = call;
    this.flush();
  }

  /** Sends one request for every type whose subscriptions or ACK state changed. */
  protected flush(): void {
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

  /**
   * Writes one request, noting that the node went out and the NACK was said (once).
   * `newlyNamed` as in AdsStreamEvents.onRequestWritten.
   */
  protected write(
    state: S,
    bytes: Uint8Array,
    sent: SentRequest,
    newlyNamed: readonly string[],
  ): void {
    const call = this.call!;
    this.nodeSent = true;
    state.sentOnStream = true;
    state.nack = undefined; // a NACK is sent once, never repeated on later requests
    call.write(bytes, () => {
      if (this.call === call) this.events.onRequestWritten(sent, newlyNamed);
    });
  }

  /**
   * Decodes a response and notes that the stream has had one; undefined if it does not decode
   * (without a type URL and nonce there is nothing to NACK; the stream carries on) or if the
   * stream was closed meanwhile.
   */
  protected decodeResponse<T>(codec: MessageCodec<T>, bytes: Uint8Array): T | undefined {
    let response: T;
    try {
      response = codec.decode(bytes);
    } catch (e) {
      if (trace.enabled) trace.log(`${this.server.serverUri}: undecodable response: ${String(e)}`);
      return undefined;
    }
    return this.markResponse() ? response : undefined;
  }

  /** Notes that the stream has had a response; false if the stream was closed meanwhile. */
  protected markResponse(): boolean {
    if (!this.hadResponse) {
      this.hadResponse = true;
      this.events.onConnected();
    }
    return !this.closed;
  }

  /** Whether the stream is still the live one after a callback ran. */
  protected get live(): boolean {
    return !this.closed && this.call !== undefined;
  }

  /** Records the nonce and NACK to answer with, and sends it (with callbacks' new names). */
  protected answer(state: S, nonce: string, nack: string | undefined): void {
    state.nonce = nonce;
    state.nack = nack;
    state.dirty = true;
    // Synchronous: subscriptions made by watcher callbacks during onResponse ride along.
    this.flush();
  }

  protected static errorDetail(message: string | undefined) {
    return message === undefined ? null : { code: status.INVALID_ARGUMENT, message, details: [] };
  }

  /** Unreadable data for a type counts as a response, NACKed; the NACK goes back as usual. */
  private rejected(typeUrl: string, message: string): void {
    if (!this.markResponse()) return;
    this.events.onRejected(typeUrl, message);
    const state = this.types.get(typeUrl);
    if (this.live && state) this.answer(state, state.nonce, message);
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
    const delay = this.reconnectDelay(hadResponse);
    if (delay > 0) this.startAfter(delay);
    this.events.onStreamEnded(error, hadResponse);
    if (delay <= 0 && !this.closed && !this.call && !this.retryTimer) this.start();
  }

  /**
   * The wait before the next stream. After a stream that failed before any response: the next
   * backoff delay. After a healthy stream (one that had a response): the backoff is reset, and
   * the next stream starts once the initial delay has passed since the last one started — at
   * once after a stream that lived longer than that (a server rolling over, a load balancer
   * recycling connections), and never more often than once per initial delay against a server
   * that answers and closes at once (grpc-java's rule; grpc-go and C-core reconnect at once).
   */
  private reconnectDelay(hadResponse: boolean): number {
    if (!hadResponse) return this.backoff.next();
    this.backoff.reset();
    return Math.max(0, this.backoff.next() - (Date.now() - this.startedAt));
  }

  private startAfter(delayMs: number): void {
    this.retryDue = Date.now() + delayMs;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.start();
    }, delayMs);
  }
}
