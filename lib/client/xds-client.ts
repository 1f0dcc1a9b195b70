import { status, type ChannelCredentials, type ChannelOptions } from '@grpc/grpc-js';
import type { MeterProvider } from '@opentelemetry/api';
import { EventEmitter } from 'eventemitter3';
import { loadBootstrap, serverKey, type Bootstrap, type XdsServerConfig } from '../bootstrap';
import type { LbPolicyRegistry, ResourceType } from '../resources/resource-type';
import { logError, tracer } from '../trace';
import type { AdsStream, AdsStreamEvents, SentRequest, WireResponse } from './ads-stream';
import { DeltaAdsStream } from './delta-stream';
import { SotwAdsStream } from './sotw-stream';
import type { ResponseShape } from './response-scan';
import { Backoff, type BackoffOptions } from './backoff';
import { XdsError } from '../errors';
import { channelCredentials } from './credentials';
import { checkClientOptions, resourceNameProblem } from './options';
import { cachedVersions, dumpChannels, type ResourceDump } from './dump';
import { ServerChannel, type AppliedResources } from './server-channel';
import type { XdsClientEvents } from './events';
import { GrpcTransport } from './grpc-transport';
import { buildNode } from './node';
import { processResponse } from './response-processor';
import { parseResourceName } from './resource-name';
import { ResourceState } from './resource-state';
import type { ResourceWatcher, WatchHandle } from './resource-watcher';
import type { XdsTransportFactory } from './transport';
import { startMetrics, type ClientMetrics } from './xds-metrics';

const trace = tracer('xds_client');

/** gRFC A57: how long to wait for a subscribed resource before calling it non-existent. */
export const DEFAULT_RESOURCE_TIMEOUT_MS = 15_000;

export type { ResourceDump } from './dump';

export interface XdsClientOptions {
  /** A bootstrap object or JSON text; omitted: GRPC_XDS_BOOTSTRAP / GRPC_XDS_BOOTSTRAP_CONFIG. */
  bootstrap?: object | string;
  /** The does-not-exist timer, in (0, 2^31 - 1] ms. Default 15 000 ms. */
  resourceTimeoutMs?: number;
  /** Reconnect backoff. Default 1 s, ×1.6, ±20 % jitter, 120 s cap. */
  backoff?: BackoffOptions;
  /** grpc-js channel options for the connections to xDS servers. */
  channelOptions?: ChannelOptions;
  /** Replaces the grpc-js transport (for tests, or a custom connection). */
  transportFactory?: XdsTransportFactory;
  /**
   * The LB policies the clusters' consumer can run, for Clusters' `load_balancing_policy`
   * (gRFC A52). Omitted: custom (`TypedStruct`) policies are skipped. `xds-client/grpc` passes
   * grpc-js's registry.
   */
  lbPolicies?: LbPolicyRegistry;
  /**
   * Where gRFC A78's metrics go (docs/operations.md). Omitted: the global MeterProvider of
   * `@opentelemetry/api`, if one is registered when the client is made; else none are recorded.
   */
  meterProvider?: MeterProvider;
}

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
  private readonly channels = new Map<string, ServerChannel>();
  private readonly types = new Map<string, ResourceType<unknown>>();
  /** Per server key: credentials built, and their files read, at construction. */
  private readonly credentials = new Map<string, ChannelCredentials>();
  private closed = false;
  /**
   * What the client serves, reported as CSDS's `client_scope` (gRFC A71): '' for a client an
   * application made; `xds-client/grpc` sets it for the clients its channels and servers share.
   */
  clientScope = '';
  /** What a disconnected idle server channel leaves for its successor (see channelFor). */
  private readonly pastChannels = new Map<string, { backoff: Backoff; retryAt: number }>();
  /** Resources whose last watcher left this tick (see forget). */
  private readonly forgetting = new Map<ResourceState<unknown>, ServerChannel>();
  private readonly metrics: ClientMetrics | undefined;

  /** Throws XdsError(INVALID_ARGUMENT) naming the option, bootstrap field or file at fault. */
  constructor(options: XdsClientOptions = {}) {
    super();
    checkClientOptions(options);
    this.options = options;
    this.bootstrap = loadBootstrap(options.bootstrap);
    this.resourceTimeoutMs = options.resourceTimeoutMs ?? DEFAULT_RESOURCE_TIMEOUT_MS;
    if (!options.transportFactory) this.buildCredentials();
    this.metrics = startMetrics(this, () => this.channels.values(), options.meterProvider);
    openClients.add(this);
  }

  /** The bootstrap path of every server, so a bad credentials file is named where it is set. */
  private buildCredentials(): void {
    const servers: [XdsServerConfig, string][] = this.bootstrap.xdsServers.map((server, i) => [
      server,
      `xds_servers[${i}]`,
    ]);
    for (const [name, authority] of this.bootstrap.authorities) {
      authority.xdsServers.forEach((server, i) => {
        servers.push([server, `authorities[${JSON.stringify(name)}].xds_servers[${i}]`]);
      });
    }
    for (const [server, where] of servers) {
      const key = serverKey(server);
      if (!this.credentials.has(key)) this.credentials.set(key, channelCredentials(server, where));
    }
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
    const channel = this.channelFor(parsed.authority);
    if (!channel) {
      const error = new XdsError(
        status.INVALID_ARGUMENT,
        `${type.typeName} "${name}": authority "${parsed.authority}" is not in the bootstrap`,
        { typeUrl: type.typeUrl, resourceName: name, nodeId: this.bootstrap.node.id },
      );
      // Through a ResourceState like every other delivery: queued, contained, cancellable.
      const cancel = ResourceState.failed(type, name, error).addWatcher(watcher);
      return { cancel: () => void cancel() };
    }
    let state = channel.get(type.typeUrl, parsed.canonical) as ResourceState<T> | undefined;
    if (!state) {
      state = new ResourceState(type, parsed.canonical, channel);
      channel.add(state as ResourceState<unknown>);
      channel.stream.subscribe(type.typeUrl, parsed.canonical);
    }
    const remove = state.addWatcher(watcher);
    const owner = state;
    return {
      cancel: () => {
        if (remove() && owner.watcherCount === 0) this.forget(channel, owner);
      },
    };
  }

  /** Every resource the client knows of, with its CSDS status. */
  dump(): ResourceDump[] {
    return dumpChannels(this.channels.values());
  }

  /** Ends every stream, timer and watch. Watchers are not called again. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    openClients.delete(this);
    this.metrics?.stop();
    for (const channel of this.channels.values()) {
      for (const state of channel.allResources()) state.dispose();
      channel.clear();
      channel.stream.close();
      channel.transport.close();
    }
    this.channels.clear();
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

  private serversFor(authority: string | undefined): readonly XdsServerConfig[] | undefined {
    if (authority === undefined) return this.bootstrap.xdsServers;
    const config = this.bootstrap.authorities.get(authority);
    if (!config) return undefined;
    return config.xdsServers.length ? config.xdsServers : this.bootstrap.xdsServers;
  }

  /** The channel to the first server of an authority (fallback, gRFC A71, is not done yet). */
  private channelFor(authority: string | undefined): ServerChannel | undefined {
    const server = this.serversFor(authority)?.[0];
    if (!server) return undefined;
    const key = serverKey(server);
    let channel = this.channels.get(key);
    if (!channel) {
      // A server disconnected for want of watches keeps its backoff when it is needed again:
      // re-watching must never be a way around the reconnect backoff. Its old error is not
      // replayed: new watchers hear of the next attempt, which waits out the backoff.
      const past = this.pastChannels.get(key);
      this.pastChannels.delete(key);
      const backoff = past?.backoff ?? new Backoff(this.options.backoff);
      const transport =
        this.options.transportFactory?.(server) ??
        new GrpcTransport(server, this.options.channelOptions, this.credentials.get(key));
      const events: AdsStreamEvents<AppliedResources> = {
        onResponse: (response) => this.onResponse(channel!, response),
        onUnchangedResponse: (shape, applied) => this.onUnchangedResponse(channel!, shape, applied),
        cachedVersions: (typeUrl) => cachedVersions(channel!, typeUrl),
        onConnected: () => this.onConnected(channel!),
        onRequestWritten: (request) => this.onRequestWritten(channel!, request),
        onStreamEnded: (error, hadResponse) => this.onStreamEnded(channel!, error, hadResponse),
      };
      // The wire protocol is the server entry's api_type; everything above it is shared.
      const Stream = server.apiType === 'AGGREGATED_DELTA_GRPC' ? DeltaAdsStream : SotwAdsStream;
      const stream: AdsStream<AppliedResources> = new Stream<AppliedResources>(
        server,
        transport,
        buildNode(this.bootstrap.node),
        backoff,
        this.bootstrap.node.id,
        events,
        past?.retryAt ?? 0,
      );
      channel = new ServerChannel(server, key, transport, stream, backoff);
      this.channels.set(key, channel);
    }
    return channel;
  }

  /**
   * Drops a resource nobody watches any more, at the end of the tick: a cancel followed by a
   * watch in the same tick (a consumer replacing its watcher) keeps the cached resource. The
   * unsubscription is sent in the same step as the cache entry goes, so a watch made any later
   * is a new subscription the server answers — never an unchanged name list it ignores while
   * the cache is gone. A server left with no resource at all is disconnected.
   */
  private forget(channel: ServerChannel, state: ResourceState<unknown>): void {
    this.forgetting.set(state, channel);
    if (this.forgetting.size > 1) return;
    queueMicrotask(() => {
      const touched = new Set<ServerChannel>();
      for (const [s, home] of this.forgetting) {
        if (s.watcherCount > 0 || !home.remove(s)) continue;
        s.dispose();
        home.stream.unsubscribe(s.type.typeUrl, s.name);
        touched.add(home);
      }
      this.forgetting.clear();
      for (const home of touched) {
        if (home.isEmpty) this.closeChannel(home);
        else home.stream.flushNow();
      }
    });
  }

  private closeChannel(channel: ServerChannel): void {
    this.pastChannels.set(channel.key, {
      backoff: channel.backoff,
      retryAt: channel.stream.retryAt,
    });
    channel.stream.close();
    channel.transport.close();
    this.channels.delete(channel.key);
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
    const byName = channel.resourcesOf(type.typeUrl);
    const { verdict, notifications, valid, invalid } = processResponse(response, {
      server: channel.config,
      lbPolicies: this.options.lbPolicies,
      certificateProviders: this.bootstrap.certificateProviders,
      nodeId: this.bootstrap.node.id,
      type,
      lookup: (name) => byName?.get(name),
      entries: () => byName?.values() ?? [],
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
    for (const state of applied) {
      if (channel.get(typeUrl, state.name) === state) state.markAcked(versionInfo, now);
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

  private onConnected(channel: ServerChannel): void {
    channel.connectivityError = undefined;
    this.notify('connected', () => ({ server: channel.config.serverUri }));
  }

  /** gRFC A57: a does-not-exist timer starts once the request naming the resource is written. */
  private onRequestWritten(channel: ServerChannel, request: SentRequest): void {
    this.notify('request', () => ({ server: channel.config.serverUri, ...request }));
    const byName = channel.resourcesOf(request.typeUrl);
    if (!byName) return;
    for (const name of request.resourceNames) {
      byName.get(name)?.requestWritten(this.resourceTimeoutMs, this.onResourceTimeout);
    }
  }

  private readonly onResourceTimeout = (state: ResourceState<unknown>): void => {
    const error = new XdsError(
      status.NOT_FOUND,
      `${state.type.typeName} "${state.name}" does not exist: not received within ` +
        `${this.resourceTimeoutMs} ms`,
      { typeUrl: state.type.typeUrl, resourceName: state.name, nodeId: this.bootstrap.node.id },
    );
    state.markDoesNotExist(error);
    state.notifyResourceError(error);
  };

  /** The server let a resource's TTL run out: it is gone, as if the server had removed it. */
  private readonly onTtlExpired = (state: ResourceState<unknown>): void => {
    const error = new XdsError(
      status.NOT_FOUND,
      `${state.type.typeName} "${state.name}" does not exist: its TTL ran out without an ` +
        'update or heartbeat from the xDS server',
      { typeUrl: state.type.typeUrl, resourceName: state.name, nodeId: this.bootstrap.node.id },
    );
    state.markDeleted(error);
    state.notifyResourceError(error);
  };

  private onStreamEnded(
    channel: ServerChannel,
    error: XdsError | undefined,
    hadResponse: boolean,
  ): void {
    // Timers belong to a stream: the next one owes every uncached resource a fresh verdict.
    for (const state of channel.allResources()) state.streamEnded();
    this.notify('disconnected', () => ({ server: channel.config.serverUri, error, hadResponse }));
    if (!error) return;
    // gRFC A57: a connectivity failure. Nothing cached is dropped.
    channel.connectivityError = error;
    for (const state of [...channel.allResources()]) {
      if (this.closed) return;
      state.notifyError(error);
    }
  }
}
