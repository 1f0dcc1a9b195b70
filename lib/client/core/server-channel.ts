import type { XdsServerConfig } from '../../bootstrap';
import type { XdsError } from '../../errors';
import type { AdsStream } from '../ads/ads-stream';
import type { Backoff } from '../transport/backoff';
import type { ResourceState } from '../cache/resource-state';
import type { XdsTransport } from '../transport/transport';

/**
 * What a server channel needs of an authority that uses it (authority.ts): the cache lives
 * there, not here, so that a switch of server keeps it (gRFC A71, decision 0021).
 */
export interface ChannelAuthority {
  /** The server whose data the authority uses now: the last of those it connected to. */
  readonly current: ServerChannel | undefined;
  get(typeUrl: string, name: string): ResourceState<unknown> | undefined;
  resourcesOf(typeUrl: string): ReadonlyMap<string, ResourceState<unknown>> | undefined;
}

/**
 * The key of the stream that carries a type: '' for the one stream of an aggregated (or REST,
 * or FILESYSTEM) server; the type URL itself on the per-type api_types (GRPC, DELTA_GRPC), whose
 * streams fail, back off and resume each on its own.
 */
export type StreamKey = string;

/** Whether the stream `key` carries resources of `typeUrl`. */
export function carries(key: StreamKey, typeUrl: string): boolean {
  return key === '' || key === typeUrl;
}

/** One stream of a channel, with the backoff of its reconnects. */
export interface ChannelStream {
  readonly stream: AdsStream;
  readonly backoff: Backoff;
}

/**
 * One xDS server: its streams, its connectivity state, and the authorities using it. Its
 * streams subscribe every resource of those authorities; responses apply to the ones it is
 * current for.
 */
export class ServerChannel {
  /** Set when a stream failed before any response; cleared by the next one's first response. */
  private readonly failures = new Map<StreamKey, XdsError>();
  /** Per type, the version of the last response processed (for the dump). */
  private readonly systemVersions = new Map<string, string>();
  /** The authorities with this server among those they use (its primary, or a fallback). */
  private readonly authorities = new Set<ChannelAuthority>();
  private readonly streams = new Map<StreamKey, ChannelStream>();

  constructor(
    readonly config: XdsServerConfig,
    /** serverKey(config): the channel's key in the client's maps. */
    readonly key: string,
    readonly transport: XdsTransport,
    /** Whether each type has a stream of its own (api_type GRPC, DELTA_GRPC). */
    private readonly perType: boolean,
    /** Opens the stream `key` (called on the first subscription it carries). */
    private readonly openStream: (key: StreamKey) => ChannelStream,
  ) {}

  /** The key of the stream that carries `typeUrl`. */
  streamKeyOf(typeUrl: string): StreamKey {
    return this.perType ? typeUrl : '';
  }

  /** The streams opened so far, by key. */
  get openStreams(): ReadonlyMap<StreamKey, ChannelStream> {
    return this.streams;
  }

  /** An authority starts using this server (fallback.ts). */
  addAuthority(authority: ChannelAuthority): void {
    this.authorities.add(authority);
  }

  /** An authority stops using this server; true if others still use it. */
  removeAuthority(authority: ChannelAuthority): boolean {
    this.authorities.delete(authority);
    return this.authorities.size > 0;
  }

  /** Whether an authority uses this server. */
  get inUse(): boolean {
    return this.authorities.size > 0;
  }

  /** The authorities using this server. */
  authoritiesUsing(): Iterable<ChannelAuthority> {
    return this.authorities.values();
  }

  /** The version of the last response of a type processed (for the dump and NACK events). */
  systemVersionOf(typeUrl: string): string | undefined {
    return this.systemVersions.get(typeUrl);
  }

  /** A response of a type was processed (or confirmed unchanged) at `version`. */
  responseProcessed(typeUrl: string, version: string): void {
    this.systemVersions.set(typeUrl, version);
  }

  private streamOf(typeUrl: string): AdsStream {
    const key = this.streamKeyOf(typeUrl);
    let entry = this.streams.get(key);
    if (!entry) this.streams.set(key, (entry = this.openStream(key)));
    return entry.stream;
  }

  subscribe(typeUrl: string, name: string): void {
    this.streamOf(typeUrl).subscribe(typeUrl, name);
  }

  unsubscribe(typeUrl: string, name: string): void {
    this.streams.get(this.streamKeyOf(typeUrl))?.stream.unsubscribe(typeUrl, name);
  }

  /** Whether `name` is subscribed and a request of its type went out on its current stream. */
  isRequested(typeUrl: string, name: string): boolean {
    return !!this.streams.get(this.streamKeyOf(typeUrl))?.stream.isRequested(typeUrl, name);
  }

  /** Sends pending subscription changes now rather than at the end of the tick. */
  flushNow(): void {
    for (const { stream } of this.streams.values()) stream.flushNow();
  }

  /** Ends every stream for good. */
  close(): void {
    for (const { stream } of this.streams.values()) stream.close();
  }

  /** The connectivity error of the stream carrying `typeUrl`: replayed to new watchers. */
  connectivityErrorOf(typeUrl: string): XdsError | undefined {
    return this.failures.get(this.streamKeyOf(typeUrl));
  }

  /** Whether a stream of the server failed before any response and has not answered since. */
  get failing(): boolean {
    return this.failures.size > 0;
  }

  /** The stream `key` failed before any response (gRFC A57). */
  streamFailed(key: StreamKey, error: XdsError): void {
    this.failures.set(key, error);
  }

  /** The stream `key` had its first response: the server is reachable for its types. */
  streamConnected(key: StreamKey): void {
    this.failures.delete(key);
  }

  /** The cache entry `name` of an authority this server is current for. */
  lookup(typeUrl: string, name: string): ResourceState<unknown> | undefined {
    for (const authority of this.authorities) {
      if (authority.current !== this) continue;
      const state = authority.get(typeUrl, name);
      if (state) return state;
    }
    return undefined;
  }

  /**
   * `lookup` for many names of one type: the type's maps of the authorities this server is
   * current for, found once (a response or a request names thousands).
   */
  lookupOf(typeUrl: string): (name: string) => ResourceState<unknown> | undefined {
    const maps = this.mapsOf(typeUrl);
    if (maps.length === 1) {
      const only = maps[0]!;
      return (name) => only.get(name);
    }
    return (name) => {
      for (const map of maps) {
        const state = map.get(name);
        if (state) return state;
      }
      return undefined;
    };
  }

  /**
   * Every cache entry of a type in the authorities this server is current for: most often one
   * map's own iterator (a generator resumed per entry cost a SotW response's deletion walk).
   */
  resourcesOf(typeUrl: string): Iterable<ResourceState<unknown>> {
    const maps = this.mapsOf(typeUrl);
    return maps.length === 1 ? maps[0]!.values() : maps.flatMap((map) => [...map.values()]);
  }

  /** How many entries `resourcesOf(typeUrl)` has. */
  resourceCountOf(typeUrl: string): number {
    let count = 0;
    for (const map of this.mapsOf(typeUrl)) count += map.size;
    return count;
  }

  /** The type's maps of the authorities this server is current for. */
  private mapsOf(typeUrl: string): ReadonlyMap<string, ResourceState<unknown>>[] {
    const maps: ReadonlyMap<string, ResourceState<unknown>>[] = [];
    for (const authority of this.authorities) {
      const map = authority.current === this ? authority.resourcesOf(typeUrl) : undefined;
      if (map) maps.push(map);
    }
    return maps;
  }
}
