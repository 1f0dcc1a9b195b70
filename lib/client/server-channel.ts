import type { XdsServerConfig } from '../bootstrap';
import type { XdsError } from '../errors';
import type { AdsStream } from './ads-stream';
import type { Backoff } from './backoff';
import type { ResourceState } from './resource-state';
import type { XdsTransport } from './transport';

/** What a response's verdict hands back for its unchanged re-sends: the entries it confirmed. */
export type AppliedResources = readonly ResourceState<unknown>[];

/**
 * What a server channel needs of an authority that uses it (authority.ts): the cache lives
 * there, not here, so that a switch of server keeps it (gRFC A71, decision 0021).
 */
export interface ChannelUser {
  /** The server whose data the authority uses now: the last of those it connected to. */
  readonly current: ServerChannel | undefined;
  get(typeUrl: string, name: string): ResourceState<unknown> | undefined;
  resourcesOf(typeUrl: string): ReadonlyMap<string, ResourceState<unknown>> | undefined;
}

/**
 * One xDS server: its stream, its connectivity state, and the authorities using it. Its stream
 * subscribes every resource of those authorities; responses apply to the ones it is current for.
 */
export class ServerChannel {
  /** Set when a stream failed before any response; cleared by the next stream's first one. */
  connectivityError: XdsError | undefined;
  /** Per type, the version of the last response processed (for the dump). */
  readonly systemVersions = new Map<string, string>();
  /** The authorities with this server among those they use (its primary, or a fallback). */
  readonly users = new Set<ChannelUser>();

  constructor(
    readonly config: XdsServerConfig,
    /** serverKey(config): the channel's key in the client's maps. */
    readonly key: string,
    readonly transport: XdsTransport,
    readonly stream: AdsStream<AppliedResources>,
    readonly backoff: Backoff,
  ) {}

  /** The cache entry `name` of an authority this server is current for. */
  lookup(typeUrl: string, name: string): ResourceState<unknown> | undefined {
    for (const user of this.users) {
      if (user.current !== this) continue;
      const state = user.get(typeUrl, name);
      if (state) return state;
    }
    return undefined;
  }

  /**
   * `lookup` for many names of one type: the type's maps of the authorities this server is
   * current for, found once (a response or a request names thousands).
   */
  lookupOf(typeUrl: string): (name: string) => ResourceState<unknown> | undefined {
    const maps: ReadonlyMap<string, ResourceState<unknown>>[] = [];
    for (const user of this.users) {
      const map = user.current === this ? user.resourcesOf(typeUrl) : undefined;
      if (map) maps.push(map);
    }
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

  /** Every cache entry of a type in the authorities this server is current for. */
  *resourcesOf(typeUrl: string): Iterable<ResourceState<unknown>> {
    for (const user of this.users) {
      if (user.current === this) yield* user.resourcesOf(typeUrl)?.values() ?? [];
    }
  }
}
