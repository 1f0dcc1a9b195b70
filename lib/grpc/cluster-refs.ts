// gRFC A31: a cluster stays in the channel's configuration while anything may still send an
// RPC to it — a ConfigSelector that can pick it, or an RPC that picked it and has not been
// committed yet — even after the routes stop naming it.

import { SmallMap } from '../small-map';

/** Counts the holders of each cluster; the first takes a subscription, the last drops it. */
export class ClusterRefs {
  /** A SmallMap: a channel's routes mostly name one cluster. */
  private readonly counts = new SmallMap<string, { count: number; release: () => void }>();
  private closed = false;

  /** `manager` keeps a subscribed cluster in the configuration until it is released. */
  constructor(private readonly manager: { addClusterSubscription(cluster: string): () => void }) {}

  /** One more holder of `cluster`; the returned function lets go (once). */
  ref(cluster: string): () => void {
    let held = this.hold(cluster);
    return () => {
      if (!held) return;
      held = false;
      this.unref(cluster);
    };
  }

  /**
   * One more holder of `cluster`, with no function made for it (one per RPC): false when the
   * resolver has gone (nothing to let go of then). A true hold is let go with `unref`, once.
   */
  hold(cluster: string): boolean {
    if (this.closed) return false;
    const entry = this.counts.get(cluster);
    if (entry) entry.count++;
    else
      this.counts.set(cluster, { count: 1, release: this.manager.addClusterSubscription(cluster) });
    return true;
  }

  /** The resolver is going away: holders that let go later change nothing. */
  close(): void {
    this.closed = true;
    this.counts.clear();
  }

  /** Lets go of a `hold` on `cluster`. */
  unref(cluster: string): void {
    const entry = this.counts.get(cluster);
    if (!entry || --entry.count > 0) return;
    this.counts.delete(cluster);
    entry.release();
  }
}
