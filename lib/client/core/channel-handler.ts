import type { Bootstrap } from '../../bootstrap';
import type { XdsError } from '../../errors';
import type { LbPolicyRegistry } from '../../resources/resource-type';
import { tracer } from '../../trace';
import type {
  AdsStreamEvents,
  ConfirmedEntry,
  ResponseVerdict,
  SentRequest,
  WireResponse,
} from '../ads/ads-stream';
import type { ResponseShape } from '../ads/response-scan';
import { endTimers, restartTimers, startTimers } from '../cache/does-not-exist-timer';
import { notReceivedError, timedOutError, ttlExpiredError } from '../cache/resource-errors';
import {
  deliverNow,
  runNotification,
  type Notification,
  type ResourceState,
} from '../cache/resource-state';
import type { Authorities } from './authority';
import { cachedVersions } from './dump';
import type { EventSink } from './event-sink';
import { resourceTimeoutFor } from './options';
import { processResponse, rejectType, type ResponseContext } from './response-processor';
import { carries, type ServerChannel, type StreamKey } from './server-channel';
import type { TypeRegistry } from './type-registry';

const trace = tracer('xds_client');

/** What the handler needs of its client. */
export interface ChannelHandlerContext {
  readonly bootstrap: Bootstrap;
  readonly lbPolicies: LbPolicyRegistry | undefined;
  /** The `resourceTimeoutMs` option; undefined: each server's default (resourceTimeoutFor). */
  readonly resourceTimeoutMs: number | undefined;
  readonly types: TypeRegistry;
  readonly authorities: Authorities;
  readonly events: EventSink;
  /** Once the client is closed, no watcher is called. */
  readonly closed: () => boolean;
}

/**
 * What the server channels' streams report (AdsStreamEvents), turned into cache changes,
 * watcher notifications and the client's events. The streams know nothing of the cache: this
 * is the one place their reports meet it (grpc-go's xdsChannelEventHandler).
 */
export class ChannelEventHandler {
  /** The types whose decoding has been prepared (ResourceType.prepare): once per client. */
  private readonly prepared = new Set<string>();

  constructor(private readonly ctx: ChannelHandlerContext) {}

  /** The events of one stream of a channel (all of its types, or one on GRPC/DELTA_GRPC). */
  eventsFor(channel: ServerChannel, stream: StreamKey): AdsStreamEvents {
    return {
      onResponse: (response) => this.onResponse(channel, response),
      onUnchangedResponse: (shape, confirmed) =>
        this.onUnchangedResponse(channel, shape, confirmed),
      cachedVersions: (typeUrl) => cachedVersions(channel, typeUrl),
      onRejected: (typeUrl, message) => this.onRejected(channel, typeUrl, message),
      onConnected: () => this.onConnected(channel, stream),
      onRequestWritten: (request, newlyNamed) =>
        this.onRequestWritten(channel, request, newlyNamed),
      onStreamEnded: (error, hadResponse) =>
        this.onStreamEnded(channel, stream, error, hadResponse),
    };
  }

  private contextFor(channel: ServerChannel, typeUrl: string): ResponseContext | undefined {
    const type = this.ctx.types.get(typeUrl);
    if (!type) return undefined;
    const { bootstrap } = this.ctx;
    return {
      server: channel.config,
      lbPolicies: this.ctx.lbPolicies,
      certificateProviders: bootstrap.certificateProviders,
      nodeId: bootstrap.node.id,
      type,
      // The type's maps found once per response, not per resource (a response names thousands).
      lookup: channel.lookupOf(typeUrl),
      entries: () => channel.resourcesOf(typeUrl),
      entryCount: () => channel.resourceCountOf(typeUrl),
      onTtlExpired: this.onTtlExpired,
    };
  }

  private onResponse(channel: ServerChannel, response: WireResponse): ResponseVerdict | undefined {
    const server = channel.config.serverUri;
    const { events } = this.ctx;
    events.notify('response', () => ({
      server,
      typeUrl: response.typeUrl,
      versionInfo: response.versionInfo,
      nonce: response.nonce,
      resourceCount: response.resources.length,
      ...(response.protocol === 'delta' && { removedResources: response.removed }),
    }));
    const context = this.contextFor(channel, response.typeUrl);
    if (!context) {
      if (trace.enabled) {
        trace.log(`${server}: ignoring response of unknown type ${response.typeUrl}`);
      }
      return undefined;
    }
    const { verdict, notifications, valid, invalid } = processResponse(response, context);
    channel.responseProcessed(response.typeUrl, response.versionInfo);
    const event = {
      server,
      typeUrl: response.typeUrl,
      versionInfo: response.versionInfo,
      nonce: response.nonce,
      validResources: valid,
      invalidResources: invalid,
    };
    if (verdict.nack === undefined) {
      events.notify('ack', () => event);
    } else {
      if (trace.enabled) trace.log(`${server}: NACK ${response.typeUrl}: ${verdict.nack}`);
      events.notify('nack', () => ({ ...event, error: verdict.nack! }));
    }
    this.run(notifications);
    return verdict;
  }

  /** Watcher notifications, in order, unless the client closes meanwhile. */
  private run(notifications: readonly Notification[]): void {
    for (const notification of notifications) {
      if (this.ctx.closed()) break;
      runNotification(notification);
    }
  }

  /** What a transport could not read for a type: reported as a NACK of the whole type. */
  private onRejected(channel: ServerChannel, typeUrl: string, message: string): void {
    const server = channel.config.serverUri;
    if (trace.enabled) trace.log(`${server}: NACK ${typeUrl}: ${message}`);
    this.ctx.events.notify('nack', () => ({
      server,
      typeUrl,
      versionInfo: channel.systemVersionOf(typeUrl) ?? '',
      nonce: '',
      validResources: 0,
      invalidResources: 1,
      error: message,
    }));
    const context = this.contextFor(channel, typeUrl);
    if (context) this.run(rejectType(message, context));
  }

  /**
   * A re-sent response identical to the last ACKed one: nothing to decode, nobody to tell; its
   * resources get the new version (bench/RESULTS.md: a tenth of the cost of processing it).
   */
  private onUnchangedResponse(
    channel: ServerChannel,
    shape: ResponseShape,
    confirmed: readonly ConfirmedEntry[],
  ): boolean {
    if (!this.ctx.types.has(shape.typeUrl)) return false;
    const server = channel.config.serverUri;
    const { typeUrl, versionInfo, nonce } = shape;
    const { events } = this.ctx;
    events.notify('response', () => ({
      server,
      typeUrl,
      versionInfo,
      nonce,
      resourceCount: shape.resourceCount,
    }));
    const now = new Date();
    channel.responseProcessed(typeUrl, versionInfo);
    const lookup = channel.lookupOf(typeUrl);
    for (const entry of confirmed) {
      if (lookup(entry.name) === entry) entry.markAcked(versionInfo, now);
    }
    events.notify('ack', () => ({
      server,
      typeUrl,
      versionInfo,
      nonce,
      validResources: confirmed.length,
      invalidResources: 0,
    }));
    return true;
  }

  /** A stream's first response: the server is reachable again for its types (A57, A71). */
  private onConnected(channel: ServerChannel, stream: StreamKey): void {
    channel.streamConnected(stream);
    this.ctx.events.notify('connected', () => ({ server: channel.config.serverUri }));
    for (const authority of this.ctx.authorities.all()) {
      authority.fallback.answered(channel, () => {
        const current = authority.current;
        if (!current) {
          endTimers(authority.allResources());
          return;
        }
        restartTimers(
          authority.allResources(),
          (state) => current.isRequested(state.type.typeUrl, state.name),
          this.timeoutOf(current),
          (state) => this.onResourceTimeout(current, state),
        );
      });
    }
  }

  /**
   * gRFC A57: a does-not-exist timer starts once the request naming the resource is written —
   * on the stream of the server its authority uses (a failed server being retried has none).
   * Only the names new to the stream can start one: an entry whose name an earlier request on
   * the stream carried has its timer started already, or its verdict.
   */
  private onRequestWritten(
    channel: ServerChannel,
    request: SentRequest,
    newlyNamed: readonly string[],
  ): void {
    if (!this.prepared.has(request.typeUrl)) this.prepare(request.typeUrl);
    this.ctx.events.notify('request', () => ({ server: channel.config.serverUri, ...request }));
    if (newlyNamed.length === 0) return;
    startTimers(newlyNamed, channel.lookupOf(request.typeUrl), this.timeoutOf(channel), (state) =>
      this.onResourceTimeout(channel, state),
    );
  }

  /**
   * The first request of a type is on the wire: until its answer comes, this process has
   * nothing to do for it, so what decoding the answer needs (modules loaded on first use,
   * decision 0080) loads now, in the next turn of the event loop, not when the answer arrives.
   * A fresh process's first RPC waits for one answer of each of four types in a row.
   */
  private prepare(typeUrl: string): void {
    this.prepared.add(typeUrl);
    const type = this.ctx.types.get(typeUrl);
    if (!type?.prepare) return;
    setImmediate(() => {
      try {
        type.prepare!();
      } catch {
        // Decoding will load the same modules and report what fails, as a NACK.
      }
    });
  }

  private timeoutOf(channel: ServerChannel): number {
    return resourceTimeoutFor(this.ctx.resourceTimeoutMs, channel.config);
  }

  /**
   * A timer of `channel`'s stream fired: the resource does not exist (A57), or, on a server
   * with `resource_timer_is_transient_error`, the server is slow (A88: TIMEOUT, UNAVAILABLE).
   */
  private onResourceTimeout(channel: ServerChannel, state: ResourceState<unknown>): void {
    const nodeId = this.ctx.bootstrap.node.id;
    const timeoutMs = this.timeoutOf(channel);
    const { config } = channel;
    if (config.resourceTimerIsTransientError) {
      state.markTimedOut(timedOutError(state, timeoutMs, config.serverUri, nodeId), deliverNow);
    } else {
      state.markDoesNotExist(notReceivedError(state, timeoutMs, nodeId), deliverNow);
    }
  }

  private readonly onTtlExpired = (state: ResourceState<unknown>): void => {
    state.markDeleted(ttlExpiredError(state, this.ctx.bootstrap.node.id), deliverNow);
  };

  /**
   * A stream ended. On the per-type api_types, the stream is one type's only: the other types'
   * streams, their timers and their resources are not touched.
   */
  private onStreamEnded(
    channel: ServerChannel,
    stream: StreamKey,
    error: XdsError | undefined,
    hadResponse: boolean,
  ): void {
    const served = this.ctx.authorities.servedBy(channel);
    const ofStream = (typeUrl: string) => carries(stream, typeUrl);
    // Timers belong to a stream: the next one owes every uncached resource a fresh verdict.
    for (const authority of served) endTimers(authority.resourcesWhere(ofStream));
    this.ctx.events.notify('disconnected', () => ({
      server: channel.config.serverUri,
      error,
      hadResponse,
    }));
    if (!error) return;
    // gRFC A57: a connectivity failure, for the stream's types only. Nothing cached is dropped.
    channel.streamFailed(stream, error);
    for (const authority of served) {
      // A71: fall back while a watched resource is uncached; watchers hear of the failure
      // only when no server is left to try.
      if (authority.fallback.currentFailed(authority.hasUncached(ofStream))) continue;
      for (const state of [...authority.resourcesWhere(ofStream)]) {
        if (this.ctx.closed()) return;
        state.connectivityFailed(error);
      }
    }
  }
}
