import type { ResourceState } from '../cache/resource-state';
import type { Authorities, Authority } from './authority';

/**
 * Unsubscribing a resource nobody watches any more, at the end of the tick: a cancel followed
 * by a watch in the same tick (a consumer replacing its watcher) keeps the cached resource. The
 * unsubscription (a SotW name list without it, a delta `resource_names_unsubscribe`) is sent in
 * the same step as the cache entry goes, so a watch made any later is a new subscription the
 * server answers — never an unchanged name list it ignores while the cache is gone. An
 * authority left with no resource at all stops using its servers, which are disconnected when
 * no other authority uses them.
 */
export class DeferredUnsubscribe {
  /** Entries whose last watcher left this tick, with their authority. */
  private readonly pending = new Map<ResourceState<unknown>, Authority>();

  constructor(private readonly authorities: Authorities) {}

  /** `state`'s last watcher left: drop it at the end of the tick unless watched again. */
  lastWatcherLeft(authority: Authority, state: ResourceState<unknown>): void {
    this.pending.set(state, authority);
    if (this.pending.size === 1) queueMicrotask(() => this.run());
  }

  private run(): void {
    const touched = new Set<Authority>();
    for (const [state, authority] of this.pending) {
      if (state.watcherCount > 0 || !authority.remove(state)) continue;
      state.dispose();
      touched.add(authority);
    }
    this.pending.clear();
    for (const authority of touched) {
      if (authority.isEmpty) this.authorities.dropIfEmpty(authority);
      else for (const channel of authority.fallback.channels) channel.flushNow();
    }
  }
}
