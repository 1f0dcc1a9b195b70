import type { ResourceState } from '../cache/resource-state';

/**
 * The resource names one response carried: a name given twice is an error, and (SotW) a cached
 * Listener or Cluster not among them was deleted. A subscribed name is marked on its cache
 * entry (`ResourceState.namedBy`), not kept in a Set: a Set of 10,000 long names, hashed on
 * their first use and grown as it filled, was ~8 % of a large CDS response in a new client
 * (decision 0093). Names nobody subscribed to, usually none, go in a Set.
 */
export class NamesSeen {
  private readonly unsubscribed = new Set<string>();
  /** The mark: an object of its own, so that an entry keeps no Set of names alive. */
  private readonly mark = {};

  /**
   * Whether the response names `canonical` (whose cache entry is `state`, if subscribed) for
   * the first time; it is then seen.
   */
  claim(canonical: string, state: ResourceState<unknown> | undefined): boolean {
    if (state) {
      if (state.namedBy === this.mark) return false;
      state.namedBy = this.mark;
      return true;
    }
    if (this.unsubscribed.has(canonical)) return false;
    this.unsubscribed.add(canonical);
    return true;
  }

  /** Whether the response named the entry. */
  named(state: ResourceState<unknown>): boolean {
    return state.namedBy === this.mark;
  }
}
