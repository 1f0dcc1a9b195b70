import { status } from '@grpc/grpc-js';
import { EventEmitter } from 'eventemitter3';
import { loadBootstrap, type Bootstrap } from '../../bootstrap';
import type { ResourceType } from '../../resources/resource-type';
import { logError, tracer } from '../../trace';
import type { AdsStreamEvents, SentRequest, WireResponse } from '../ads/ads-stream';
import type { ResponseShape } from '../ads/response-scan';
import { XdsError } from '../../errors';
import {
  checkClientOptions,
  DEFAULT_RESOURCE_TIMEOUT_MS,
  resourceNameProblem,
  type XdsClientOptions,
} from './options';
import { cachedVersions, dumpAuthorities, type ResourceDump } from './dump';
import { Authority, serversOf } from './authority';
import { ChannelPool } from './channel-pool';
import {
  carries,
  type AppliedResources,
  type ServerChannel,
  type StreamKey,
} from './server-channel';
import type { XdsClientEvents } from './events';
import { processResponse, rejectType } from './response-processor';
import { parseResourceName } from '../cache/resource-name';
import { ResourceState } from '../cache/resource-state';
import { notReceivedError, ttlExpiredError } from '../cache/resource-errors';
import type { ResourceWatcher, WatchHandle } from '../cache/resource-watcher';
import { startMetrics, type ClientMetrics } from '../metrics/xds-metrics';

const trace = tracer('xds_client');

export { DEFAULT_RESOURCE_TIMEOUT_MS, type XdsClientOptions } from './options';
export type { ResourceDump } from './dump';

/** Every client of the process not yet closed, in creation order (CSDS reports them all). */
const openClients = new Set<XdsClientCore>();

/** The clients of this process that are not closed (gRFC A40, A71: CSDS reports every one). */
export function openXdsClients(): readonly XdsClientCore[] {
  return [...openClients];
}

/**
 * The generic xDS client core: watchers of resources of any ResourceType, deduplicated per (type, name), served over one ADS
 * stream per xDS server. See docs/api.md for the contract and docs/architecture.md for the
 * layers.
 */
export class XdsClientCore extends EventEmitter<XdsClientEvents> {
  readonly bootstrap: Bootstrap;
  private readonly resourceTimeoutMs: number;
  private readonly options: XdsClientOptions;
  private readonly channels: ChannelPool;
  /** The caches and servers in use, by authority name ('' keys old-style names). */
  private readonly authorities = new Map<string | undefined, Authority>();
  private readonly types = new Map<string, ResourceType<unknown>>();
  private closed = false;
  /**
   * What the client serves, reported as CSDS's `client_scope` (gRFC A71): '' for a client an
   * application made; `xds-client/grpc` sets it for the clients its channels and servers share.
   */
  clientScope = '';
  /** Resources whose last watcher left this tick (see forget). */
  private readonly forgetting = new Map<ResourceState<unknown>, Authority>();
  private readonly metrics: ClientMetrics | undefined;

  /** Throws XdsError(INVALID_ARGUMENT) naming the option, bootstrap field or file at fault. */
  constructor(options: XdsClientOptions = {}) {
    super();
    checkClientOptions(options);
    this.options = options;
    this.bootstrap = loadBootstrap(options.bootstrap);
    this.resourceTimeoutMs = options.resourceTimeoutMs ?? DEFAULT_RESOURCE_TIMEOUT_MS;
    this.channels = new ChannelPool(this.bootstrap, options, (channel, stream) =>
      this.streamEvents(channel, stream),
    );
    this.metrics = startMetrics(
      this,
      () => this.channels.all(),
      () => this.allResources(),
      options.meterProvider,
    );
    openClients.add(this);
  }

  /** Watches one resource of any type, ours or a user's own `ResourceType`. */
  watch<T>(type: ResourceType<T>, name: string, watcher: ResourceWatcher<T>): WatchHandle {
    if (this.closed) throw new XdsError(status.FAILED_PRECONDITION, 'XdsClient is closed');
    const problem = resourceNameProblem(name);
    if (problem) {
      throw new XdsError(status.INVALID_ARGUMENT, `${type.typeName}: ${problem}`, {
        typeUrl: type.typeUrl,
      });
    }
    this.registerType(type);
    const parsed = parseResourceName(name);
    const authority = this.authorityFor(parsed.authority);
    if (!authority) {
      const error = new XdsError(
        status.INVALID_ARGUMENT,
        `${type.typeName} "${name}": authority "${parsed.authority}" is not in the bootstrap`,
        { typeUrl: type.typeUrl, resourceName: name, nodeId: this.bootstrap.node.id },
      );
      // Through a ResourceState like every other delivery: queued, contained, cancellable.
      const cancel = ResourceState.failed(type, name, error).addWatcher(watcher);
      return { cancel: () => void cancel() };
    }
    let state = authority.get(type.typeUrl, parsed.canonical) as ResourceState<T> | undefined;
    if (!state) {
      state = new ResourceState(type, parsed.canonical, authority);
      authority.add(state as ResourceState<unknown>);
      // A71: a new uncached resource while the current server is failing is a reason to fall
      // back now (the failure itself may have found everything cached).
      if (!authority.current || authority.connectivityErrorOf(type.typeUrl)) {
        this.connectNext(authority);
      }
    }
    const remove = state.addWatcher(watcher);
    const owner = state;
    return {
      cancel: () => {
        if (remove() && owner.watcherCount === 0) this.forget(authority, owner);
      },
    };
  }

  /** Every cache entry of every authority (the metrics' `resources` gauge counts them). */
  private *allResources(): Iterable<ResourceState<unknown>> {
    for (const authority of this.authorities.values()) yield* authority.allResources();
  }

  /** Every resource the client knows of, with its CSDS status. */
  dump(): ResourceDump[] {
    return dumpAuthorities(this.authorities.values());
  }

  /** Ends every stream, timer and watch. Watchers are not called again. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    openClients.delete(this);
    this.metrics?.stop();
    for (const authority of this.authorities.values()) authority.clear();
    this.authorities.clear();
    this.channels.closeAll();
    this.removeAllListeners();
  }

  /**
   * Emits an event if anyone listens (the payload is built only then). A listener that throws
   * is logged: it must not escape into grpc-js's event loop or stop the stream.
   */
  private notify<E extends keyof XdsClientEvents>(
    event: E,
    payload: () => Parameters<XdsClientEvents[E]>[0],
  ): void {
    if (this.listenerCount(event) === 0) return;
    try {
      (this.emit as (event: E, payload: unknown) => boolean)(event, payload());
    } catch (e) {
      logError(
        `xds-client: a '${event}' listener threw: ${e instanceof Error ? e.stack : String(e)}`,
      );
    }
  }

  private registerType(type: ResourceType<unknown>): void {
    const known = this.types.get(type.typeUrl);
    if (known === undefined) this.types.set(type.typeUrl, type);
    else if (known !== type) {
      throw new XdsError(
        status.INVALID_ARGUMENT,
        `another resource type is already registered for ${type.typeUrl}`,
      );
    }
  }

  /** The authority of a resource name, with its cache and servers; undefined if unknown. */
  private authorityFor(name: string | undefined): Authority | undefined {
    let authority = this.authorities.get(name);
    if (!authority) {
      const servers = serversOf(this.bootstrap, name);
      if (!servers?.length) return undefined;
      authority = new Authority(name, servers, this.channels);
      this.authorities.set(name, authority);
    }
    return authority;
  }

  /**
   * Connects an authority to its next servers (its primary, or a fallback: gRFC A71), and
   * says so if the server it uses changed.
   */
  private connectNext(authority: Authority): boolean {
    const previous = authority.current;
    if (!authority.connectNext()) return false;
    const server = authority.current!.config.serverUri;
    if (trace.enabled) {
      trace.log(
        `authority ${String(authority.name)}: using ${server} (was ${previous?.config.serverUri})`,
      );
    }
    if (previous) {
      this.notify('fallback', () => ({
        authority: authority.name,
        server,
        previous: previous.config.serverUri,
        reason: 'fallback',
      }));
    }
    return true;
  }

  /**
   * Drops a resource nobody watches any more, at the end of the tick: a cancel followed by a
   * watch in the same tick (a consumer replacing its watcher) keeps the cached resource. The
   * unsubscription is sent in the same step as the cache entry goes, so a watch made any later
   * is a new subscription the server answers — never an unchanged name list it ignores while
   * the cache is gone. An authority left with no resource at all stops using its servers,
   * which are disconnected when no other authority uses them.
   */
  private forget(authority: Authority, state: ResourceState<unknown>): void {
    this.forgetting.set(state, authority);
    if (this.forgetting.size > 1) return;
    queueMicrotask(() => {
      const touched = new Set<Authority>();
      for (const [s, home] of this.forgetting) {
        if (s.watcherCount > 0 || !home.remove(s)) continue;
        s.dispose();
        touched.add(home);
      }
      this.forgetting.clear();
      for (const home of touched) {
        if (!home.isEmpty) {
          for (const channel of home.channels) channel.flushNow();
        } else if (this.authorities.get(home.name) === home) {
          home.disconnect();
          this.authorities.delete(home.name);
        }
      }
    });
  }

  /** What a server channel's stream reports, bound to its channel and the stream's key. */
  private streamEvents(
    channel: ServerChannel,
    stream: StreamKey,
  ): AdsStreamEvents<AppliedResources> {
    return {
      onResponse: (response) => this.onResponse(channel, response),
      onUnchangedResponse: (shape, applied) => this.onUnchangedResponse(channel, shape, applied),
      cachedVersions: (typeUrl) => cachedVersions(channel, typeUrl),
      onRejected: (typeUrl, message) => this.onRejected(channel, typeUrl, message),
      onConnected: () => this.onConnected(channel, stream),
      onRequestWritten: (request) => this.onRequestWritten(channel, request),
      onStreamEnded: (error, hadResponse) =>
        this.onStreamEnded(channel, stream, error, hadResponse),
    };
  }

  private onResponse(channel: ServerChannel, response: WireResponse) {
    const type = this.types.get(response.typeUrl);
    const server = channel.config.serverUri;
    this.notify('response', () => ({
      server,
      typeUrl: response.typeUrl,
      versionInfo: response.versionInfo,
      nonce: response.nonce,
      resourceCount: response.resources.length,
      ...(response.protocol === 'delta' && { removedResources: response.removed }),
    }));
    if (!type) {
      if (trace.enabled)
        trace.log(`${server}: ignoring response of unknown type ${response.typeUrl}`);
      return undefined;
    }
    const { verdict, notifications, valid, invalid } = processResponse(response, {
      server: channel.config,
      lbPolicies: this.options.lbPolicies,
      certificateProviders: this.bootstrap.certificateProviders,
      nodeId: this.bootstrap.node.id,
      type,
      lookup: (name) => channel.lookup(type.typeUrl, name),
      entries: () => channel.resourcesOf(type.typeUrl),
      onTtlExpired: this.onTtlExpired,
    });
    channel.systemVersions.set(type.typeUrl, response.versionInfo);
    const event = {
      server,
      typeUrl: response.typeUrl,
      versionInfo: response.versionInfo,
      nonce: response.nonce,
      validResources: valid,
      invalidResources: invalid,
    };
    if (verdict.nack === undefined) {
      this.notify('ack', () => event);
    } else {
      if (trace.enabled) trace.log(`${server}: NACK ${response.typeUrl}: ${verdict.nack}`);
      this.notify('nack', () => ({ ...event, error: verdict.nack! }));
    }
    for (const notify of notifications) {
      if (this.closed) break;
      notify();
    }
    return verdict;
  }

  /** What a transport could not read for a type: reported as a NACK of the whole type. */
  private onRejected(channel: ServerChannel, typeUrl: string, message: string): void {
    const server = channel.config.serverUri;
    if (trace.enabled) trace.log(`${server}: NACK ${typeUrl}: ${message}`);
    this.notify('nack', () => ({
      server,
      typeUrl,
      versionInfo: channel.systemVersions.get(typeUrl) ?? '',
      nonce: '',
      validResources: 0,
      invalidResources: 1,
      error: message,
    }));
    const type = this.types.get(typeUrl);
    if (!type) return;
    const notifications = rejectType(message, {
      server: channel.config,
      nodeId: this.bootstrap.node.id,
      type,
      lookup: (name) => channel.lookup(type.typeUrl, name),
      entries: () => channel.resourcesOf(type.typeUrl),
      onTtlExpired: this.onTtlExpired,
    });
    for (const notify of notifications) {
      if (this.closed) break;
      notify();
    }
  }

  /**
   * A re-sent response identical to the last ACKed one: nothing to decode, nobody to tell; its
   * resources get the new version (bench/README.md: a tenth of the cost of processing it).
   */
  private onUnchangedResponse(
    channel: ServerChannel,
    shape: ResponseShape,
    applied: AppliedResources,
  ): boolean {
    if (!this.types.has(shape.typeUrl)) return false;
    const server = channel.config.serverUri;
    const { typeUrl, versionInfo, nonce } = shape;
    this.notify('response', () => ({
      server,
      typeUrl,
      versionInfo,
      nonce,
      resourceCount: shape.resourceCount,
    }));
    const now = new Date();
    channel.systemVersions.set(typeUrl, versionInfo);
    const lookup = channel.lookupOf(typeUrl);
    for (const state of applied) {
      if (lookup(state.name) === state) state.markAcked(versionInfo, now);
    }
    this.notify('ack', () => ({
      server,
      typeUrl,
      versionInfo,
      nonce,
      validResources: applied.length,
      invalidResources: 0,
    }));
    return true;
  }

  /**
   * A stream's first response. gRFC A71: every authority using the server below its current
   * one goes back to it, and drops the servers below it.
   */
  private onConnected(channel: ServerChannel, stream: StreamKey): void {
    channel.streamConnected(stream);
    this.notify('connected', () => ({ server: channel.config.serverUri }));
    for (const authority of this.authorities.values()) {
      const previous = authority.recover(channel);
      if (!previous) continue;
      authority.restartTimers(this.resourceTimeoutMs, this.onResourceTimeout);
      this.notify('fallback', () => ({
        authority: authority.name,
        server: channel.config.serverUri,
        previous: previous.config.serverUri,
        reason: 'recovered',
      }));
    }
  }

  /**
   * gRFC A57: a does-not-exist timer starts once the request naming the resource is written —
   * on the stream of the server its authority uses (a failed server being retried has none).
   */
  private onRequestWritten(channel: ServerChannel, request: SentRequest): void {
    this.notify('request', () => ({ server: channel.config.serverUri, ...request }));
    const lookup = channel.lookupOf(request.typeUrl);
    for (const name of request.resourceNames) {
      lookup(name)?.requestWritten(this.resourceTimeoutMs, this.onResourceTimeout);
    }
  }

  private readonly onResourceTimeout = (state: ResourceState<unknown>): void => {
    const error = notReceivedError(state, this.resourceTimeoutMs, this.bootstrap.node.id);
    state.markDoesNotExist(error);
    state.notifyResourceError(error);
  };

  private readonly onTtlExpired = (state: ResourceState<unknown>): void => {
    const error = ttlExpiredError(state, this.bootstrap.node.id);
    state.markDeleted(error);
    state.notifyResourceError(error);
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
    const served = [...this.authorities.values()].filter((a) => a.current === channel);
    const ofStream = (typeUrl: string) => carries(stream, typeUrl);
    // Timers belong to a stream: the next one owes every uncached resource a fresh verdict.
    for (const authority of served) {
      for (const state of authority.allResources()) {
        if (ofStream(state.type.typeUrl)) state.streamEnded();
      }
    }
    this.notify('disconnected', () => ({ server: channel.config.serverUri, error, hadResponse }));
    if (!error) return;
    // gRFC A57: a connectivity failure, for the stream's types only. Nothing cached is dropped.
    channel.streamFailed(stream, error);
    for (const authority of served) {
      // A71: fall back while a watched resource is uncached; watchers hear of the failure
      // only when no server is left to try (those in use keep retrying).
      if (
        authority.hasUncached(ofStream) &&
        this.connectNext(authority) &&
        !authority.current?.failing
      ) {
        continue;
      }
      for (const state of [...authority.allResources()]) {
        if (this.closed) return;
        if (ofStream(state.type.typeUrl)) state.notifyError(error);
      }
    }
  }
}
