import type { Bootstrap, XdsServerConfig } from '../../bootstrap';
import type { XdsError } from '../../errors';
import type { ChannelPool } from './channel-pool';
import type { ResourceHome, ResourceState } from '../cache/resource-state';
import type { ChannelUser, ServerChannel } from './server-channel';

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
 * resources, and the servers it uses (gRFC A71). The cache is the authority's, not a server's,
 * so a switch of server never loses a cached resource (decision 0021).
 *
 * The servers in use are a prefix of the authority's `xds_servers`, in priority order: each but
 * the last failed while a watched resource was uncached, and the last is current — the one
 * whose data the authority uses. Every server in use subscribes every watched resource, so
 * each failed one keeps retrying with all of them; the first response of a higher one makes it
 * current again and drops those below it.
 */
export class Authority implements ResourceHome, ChannelUser {
  private readonly byType = new Map<string, Map<string, ResourceState<unknown>>>();
  private readonly inUse: ServerChannel[] = [];

  constructor(
    /** The authority's name; undefined for old-style resource names. */
    readonly name: string | undefined,
    /** Its `xds_servers` (or the top-level ones), highest priority first. */
    readonly servers: readonly XdsServerConfig[],
    private readonly pool: ChannelPool,
  ) {}

  get current(): ServerChannel | undefined {
    return this.inUse.at(-1);
  }

  /** The servers in use, highest priority first; the last is current. */
  get channels(): readonly ServerChannel[] {
    return this.inUse;
  }

  /** The current server's connectivity error for a type: replayed to new watchers. */
  connectivityErrorOf(typeUrl: string): XdsError | undefined {
    return this.current?.connectivityErrorOf(typeUrl);
  }

  // ---- the cache ----

  /** The cache entries of one type, by canonical name. */
  resourcesOf(typeUrl: string): ReadonlyMap<string, ResourceState<unknown>> | undefined {
    return this.byType.get(typeUrl);
  }

  get(typeUrl: string, name: string): ResourceState<unknown> | undefined {
    return this.byType.get(typeUrl)?.get(name);
  }

  /** Adds an entry and subscribes it on every server in use. */
  add(state: ResourceState<unknown>): void {
    let byName = this.byType.get(state.type.typeUrl);
    if (!byName) this.byType.set(state.type.typeUrl, (byName = new Map()));
    byName.set(state.name, state);
    for (const channel of this.inUse) channel.subscribe(state.type.typeUrl, state.name);
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
    for (const channel of this.inUse) channel.unsubscribe(state.type.typeUrl, state.name);
    return true;
  }

  get isEmpty(): boolean {
    return this.byType.size === 0;
  }

  *allResources(): Iterable<ResourceState<unknown>> {
    for (const byName of this.byType.values()) yield* byName.values();
  }

  /**
   * gRFC A71: whether a watched resource has had no verdict yet (neither received nor found
   * not to exist). Only then is a failed server worth falling back from; what is cached keeps
   * being served from the cache while the server is retried. (A NACKed resource has had its
   * verdict: a fallback would not make it valid.)
   */
  hasUncached(ofType: (typeUrl: string) => boolean = () => true): boolean {
    for (const state of this.allResources()) {
      if (state.status === 'REQUESTED' && ofType(state.type.typeUrl)) return true;
    }
    return false;
  }

  // ---- the servers in use ----

  /**
   * Connects to the next servers of the list, until one that has not failed (a server another
   * authority already found unreachable is passed over). With none in use, this is the
   * primary; otherwise a fallback. Each one added subscribes every watched resource. Returns
   * whether the current server changed.
   */
  connectNext(): boolean {
    const before = this.current;
    for (let i = this.inUse.length; i < this.servers.length; i++) {
      const channel = this.pool.acquire(this.servers[i]!);
      channel.users.add(this);
      this.inUse.push(channel);
      for (const state of this.allResources()) {
        channel.subscribe(state.type.typeUrl, state.name);
      }
      if (!channel.failing) break;
    }
    return this.current !== before;
  }

  /**
   * `channel` answered: if it is in use below the current one, it becomes current again and
   * the servers after it are dropped (closed when nobody else uses them). Returns the server
   * that was current before, if it changed.
   */
  recover(channel: ServerChannel): ServerChannel | undefined {
    const at = this.inUse.indexOf(channel);
    if (at < 0 || at === this.inUse.length - 1) return undefined;
    const previous = this.current;
    for (const dropped of this.inUse.splice(at + 1)) this.stopUsing(dropped);
    return previous;
  }

  /**
   * After a return to a higher server: the timers of the dropped server's stream went with
   * it, and the new current stream owes a verdict on what it has already requested, from now
   * (gRFC A57: a timer runs only while the stream that requested the resource is up).
   */
  restartTimers(timeoutMs: number, onExpired: (state: ResourceState<unknown>) => void): void {
    const current = this.current;
    for (const state of this.allResources()) {
      state.streamEnded();
      if (current?.isRequested(state.type.typeUrl, state.name)) {
        state.requestWritten(timeoutMs, onExpired);
      }
    }
  }

  /** Stops using every server (the last watch of the authority went). */
  disconnect(): void {
    for (const channel of this.inUse.splice(0)) this.stopUsing(channel);
  }

  /** The cache goes, without a word to its watchers (the client is closing). */
  clear(): void {
    for (const state of this.allResources()) state.dispose();
    this.byType.clear();
    this.inUse.length = 0;
  }

  private stopUsing(channel: ServerChannel): void {
    channel.users.delete(this);
    if (channel.users.size > 0) {
      for (const state of this.allResources()) {
        channel.unsubscribe(state.type.typeUrl, state.name);
      }
    } else {
      this.pool.release(channel);
    }
  }
}
