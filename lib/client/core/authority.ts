import type { Bootstrap, XdsServerConfig } from '../../bootstrap';
import type { XdsError } from '../../errors';
import type { EntryAuthority, ResourceState } from '../cache/resource-state';
import type { ChannelPool } from './channel-pool';
import type { EventSink } from './event-sink';
import { Fallback } from './fallback';
import type { ChannelAuthority, ServerChannel } from './server-channel';

/**
 * The servers of an authority (gRFC A47: its own `xds_servers`, else the top-level ones; the
 * top-level ones for old-style names), highest priority first; undefined if it is unknown.
 */
export function serversOf(
  bootstrap: Bootstrap,
  authority: string | undefined,
): readonly XdsServerConfig[] | undefined {
  if (authority === undefined) return bootstrap.xdsServers;
  const config = bootstrap.authorities.get(authority);
  if (!config) return undefined;
  return config.xdsServers.length ? config.xdsServers : bootstrap.xdsServers;
}

/**
 * One authority of the bootstrap (gRFC A47; `undefined` for old-style names): its cache of
 * resources, and the servers it uses (`fallback`, gRFC A71). The cache is the authority's, not
 * a server's, so a switch of server never loses a cached resource (decision 0021).
 */
export class Authority implements EntryAuthority, ChannelAuthority {
  private readonly byType = new Map<string, Map<string, ResourceState<unknown>>>();
  /** The servers it uses, and when it falls back or goes back up. */
  readonly fallback: Fallback;

  constructor(
    /** The authority's name; undefined for old-style resource names. */
    readonly name: string | undefined,
    servers: readonly XdsServerConfig[],
    pool: ChannelPool,
    events: EventSink,
  ) {
    this.fallback = new Fallback(name, servers, this, () => this.allResources(), pool, events);
  }

  /** The server whose data the authority uses now. */
  get current(): ServerChannel | undefined {
    return this.fallback.current;
  }

  /** The current server's connectivity error for a type: replayed to new watchers. */
  connectivityErrorOf(typeUrl: string): XdsError | undefined {
    return this.fallback.connectivityErrorOf(typeUrl);
  }

  /** The cache entries of one type, by canonical name. */
  resourcesOf(typeUrl: string): ReadonlyMap<string, ResourceState<unknown>> | undefined {
    return this.byType.get(typeUrl);
  }

  get(typeUrl: string, name: string): ResourceState<unknown> | undefined {
    return this.byType.get(typeUrl)?.get(name);
  }

  /** Adds an entry and subscribes it on every server in use (connecting one if needed). */
  add(state: ResourceState<unknown>): void {
    let byName = this.byType.get(state.type.typeUrl);
    if (!byName) this.byType.set(state.type.typeUrl, (byName = new Map()));
    byName.set(state.name, state);
    this.fallback.subscribe(state.type.typeUrl, state.name);
    this.fallback.resourceAdded(state.type.typeUrl);
  }

  /**
   * Removes the entry if it is still the one cached under its name, and unsubscribes it on
   * every server in use; true if it was.
   */
  remove(state: ResourceState<unknown>): boolean {
    const byName = this.byType.get(state.type.typeUrl);
    if (byName?.get(state.name) !== state) return false;
    byName.delete(state.name);
    if (byName.size === 0) this.byType.delete(state.type.typeUrl);
    this.fallback.unsubscribe(state.type.typeUrl, state.name);
    return true;
  }

  get isEmpty(): boolean {
    return this.byType.size === 0;
  }

  *allResources(): Iterable<ResourceState<unknown>> {
    for (const byName of this.byType.values()) yield* byName.values();
  }

  /** The entries of the types `ofType` accepts. */
  *resourcesWhere(ofType: (typeUrl: string) => boolean): Iterable<ResourceState<unknown>> {
    for (const [typeUrl, byName] of this.byType) if (ofType(typeUrl)) yield* byName.values();
  }

  /**
   * gRFC A71: whether a watched resource (of the types `ofType` accepts) has had no verdict
   * yet (neither received nor found not to exist). Only then is a failed server worth falling
   * back from; what is cached keeps being served from the cache while the server is retried.
   * (A NACKed resource has had its verdict: a fallback would not make it valid.)
   */
  hasUncached(ofType: (typeUrl: string) => boolean): boolean {
    for (const state of this.resourcesWhere(ofType)) {
      if (state.status === 'REQUESTED') return true;
    }
    return false;
  }

  /** The cache goes, without a word to its watchers (the client is closing). */
  clear(): void {
    for (const state of this.allResources()) state.dispose();
    this.byType.clear();
    this.fallback.clear();
  }
}

/** The client's authorities with a watch, by name ('' keys nothing: undefined is old-style). */
export class Authorities {
  private readonly byName = new Map<string | undefined, Authority>();

  constructor(
    private readonly bootstrap: Bootstrap,
    private readonly pool: ChannelPool,
    private readonly events: EventSink,
  ) {}

  /** The authority of a resource name, made on first use; undefined if unknown. */
  forName(name: string | undefined): Authority | undefined {
    let authority = this.byName.get(name);
    if (!authority) {
      const servers = serversOf(this.bootstrap, name);
      if (!servers?.length) return undefined;
      authority = new Authority(name, servers, this.pool, this.events);
      this.byName.set(name, authority);
    }
    return authority;
  }

  all(): Iterable<Authority> {
    return this.byName.values();
  }

  /** The authorities whose current server is `channel`. */
  servedBy(channel: ServerChannel): Authority[] {
    return [...this.byName.values()].filter((a) => a.current === channel);
  }

  /** Every cache entry of every authority (the metrics' `resources` gauge counts them). */
  *allResources(): Iterable<ResourceState<unknown>> {
    for (const authority of this.byName.values()) yield* authority.allResources();
  }

  /** An authority left with no resource stops using its servers and is forgotten. */
  dropIfEmpty(authority: Authority): void {
    if (!authority.isEmpty || this.byName.get(authority.name) !== authority) return;
    authority.fallback.disconnect();
    this.byName.delete(authority.name);
  }

  /** Every cache goes, without a word to watchers (the client is closing). */
  clear(): void {
    for (const authority of this.byName.values()) authority.clear();
    this.byName.clear();
  }
}
