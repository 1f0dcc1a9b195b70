// gRFC A71 fallback, the whole rule in one place: which of an authority's `xds_servers` it
// uses, when it falls back to the next, and when it goes back up. (The cache is the
// authority's, authority.ts: a switch of server changes which stream feeds it, nothing else;
// decision 0021.)
import type { XdsServerConfig } from '../../bootstrap';
import type { XdsError } from '../../errors';
import { tracer } from '../../trace';
import type { ResourceState } from '../cache/resource-state';
import type { ChannelPool } from './channel-pool';
import type { EventSink } from './event-sink';
import type { ChannelAuthority, ServerChannel } from './server-channel';

const trace = tracer('xds_client');

/**
 * The servers one authority uses: a prefix of its `xds_servers`, in priority order. Each but the
 * last failed while a watched resource was uncached; the last is current — the one whose data
 * the authority uses. Every server in use subscribes every watched resource, so each failed one
 * keeps retrying with all of them; the first response of a higher one makes it current again
 * and drops those below it.
 */
export class Fallback {
  private readonly inUse: ServerChannel[] = [];

  constructor(
    /** The authority's name (undefined for old-style names), for events and logs. */
    private readonly name: string | undefined,
    /** Its `xds_servers` (or the top-level ones), highest priority first. */
    private readonly servers: readonly XdsServerConfig[],
    /** The authority, as the channels it uses see it. */
    private readonly authority: ChannelAuthority,
    /** Every cache entry of the authority: each server it connects to subscribes them all. */
    private readonly entries: () => Iterable<ResourceState<unknown>>,
    private readonly pool: ChannelPool,
    private readonly events: EventSink,
  ) {}

  get current(): ServerChannel | undefined {
    return this.inUse.at(-1);
  }

  /** The servers in use, highest priority first; the last is current. */
  get channels(): readonly ServerChannel[] {
    return this.inUse;
  }

  /** The current server's connectivity error for a type. */
  connectivityErrorOf(typeUrl: string): XdsError | undefined {
    return this.current?.connectivityErrorOf(typeUrl);
  }

  /**
   * A resource was added to the cache, uncached: with no server in use, connect the primary;
   * while the current one is failing for its type, fall back now (the failure itself may have
   * found everything cached).
   */
  resourceAdded(typeUrl: string): void {
    if (!this.current || this.connectivityErrorOf(typeUrl)) this.connectNext();
  }

  /**
   * The current server's stream failed (gRFC A57) while `uncached` says whether a resource of
   * its types has had no verdict yet. Falls back if so; returns true if a server that has not
   * failed took over — then watchers need not hear of the failure (those in use keep retrying).
   */
  currentFailed(uncached: boolean): boolean {
    return uncached && this.connectNext() && !this.current?.failing;
  }

  /**
   * `channel` answered: if it is in use below the current one, it becomes current again, the
   * servers after it are dropped (closed when nobody else uses them), and `restartTimers` runs
   * (the dropped server's stream took its does-not-exist timers along).
   */
  answered(channel: ServerChannel, restartTimers: () => void): void {
    const at = this.inUse.indexOf(channel);
    if (at < 0 || at === this.inUse.length - 1) return;
    const previous = this.current!;
    for (const dropped of this.inUse.splice(at + 1)) this.stopUsing(dropped);
    restartTimers();
    this.events.notify('fallback', () => ({
      authority: this.name,
      server: channel.config.serverUri,
      previous: previous.config.serverUri,
      reason: 'recovered',
    }));
  }

  /** A resource joins the cache: every server in use subscribes it. */
  subscribe(typeUrl: string, name: string): void {
    for (const channel of this.inUse) channel.subscribe(typeUrl, name);
  }

  /** A resource leaves the cache: every server in use unsubscribes it. */
  unsubscribe(typeUrl: string, name: string): void {
    for (const channel of this.inUse) channel.unsubscribe(typeUrl, name);
  }

  /** Stops using every server (the last watch of the authority went). */
  disconnect(): void {
    for (const channel of this.inUse.splice(0)) this.stopUsing(channel);
  }

  /** Forgets the servers without a word (the client is closing them all). */
  clear(): void {
    this.inUse.length = 0;
  }

  /**
   * Connects to the next servers of the list, until one that has not failed (a server another
   * authority already found unreachable is passed over). With none in use, this is the
   * primary; otherwise a fallback. Each one added subscribes every watched resource. Returns
   * whether the current server changed, and says so if it replaced another.
   */
  private connectNext(): boolean {
    const previous = this.current;
    for (let i = this.inUse.length; i < this.servers.length; i++) {
      const channel = this.pool.acquire(this.servers[i]!);
      channel.addAuthority(this.authority);
      this.inUse.push(channel);
      for (const state of this.entries()) channel.subscribe(state.type.typeUrl, state.name);
      if (!channel.failing) break;
    }
    const current = this.current;
    if (current === previous) return false;
    const server = current!.config.serverUri;
    if (trace.enabled) {
      trace.log(
        `authority ${String(this.name)}: using ${server} (was ${previous?.config.serverUri})`,
      );
    }
    if (previous) {
      this.events.notify('fallback', () => ({
        authority: this.name,
        server,
        previous: previous.config.serverUri,
        reason: 'fallback',
      }));
    }
    return true;
  }

  private stopUsing(channel: ServerChannel): void {
    if (channel.removeAuthority(this.authority)) {
      for (const state of this.entries()) channel.unsubscribe(state.type.typeUrl, state.name);
    } else {
      this.pool.release(channel);
    }
  }
}
