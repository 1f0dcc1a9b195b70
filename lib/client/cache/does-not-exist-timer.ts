// gRFC A57's does-not-exist timer, the whole rule in one place:
// - one timer per cache entry, started when a request naming the resource has been written on
//   a stream (never before: a server that cannot be reached gets UNAVAILABLE, not NOT_FOUND);
// - stopped by any verdict of that stream on the resource (received, NACKed, deleted);
// - every timer of a stream stops when the stream ends, and the next stream owes a fresh
//   verdict to every resource with no value (as gRPC C-core does), whatever the last one said;
// - after a return to a higher server (A71), the new current stream's timers run from then;
// - a timer that fires checks the cache again: a resource that arrived meanwhile is kept.
// Unlike a resource's TTL (resource-state.ts), it does not survive a stream's end.

/** An entry with a timer, as the stream-level rules below see it. */
export interface TimedEntry {
  readonly doesNotExist: DoesNotExistTimer;
}

/** The does-not-exist timer of one cache entry. */
export class DoesNotExistTimer {
  private handle: NodeJS.Timeout | undefined;
  /**
   * The current stream owes this resource a verdict: it has no value and the stream has said
   * nothing of it yet, so the next request naming it starts the timer.
   */
  private due = true;

  constructor(
    /**
     * The entry itself, asked whether it holds a resource now (the entry, not a closure over
     * it: one object fewer per cached resource).
     */
    private readonly entry: { readonly resource: unknown },
  ) {}

  private hasValue(): boolean {
    return this.entry.resource !== undefined;
  }

  /** A request naming the resource was written: starts the timer if a verdict is owed. */
  requestWritten(timeoutMs: number, onFired: () => void): void {
    if (!this.due || this.handle || this.hasValue()) return;
    this.due = false;
    this.handle = setTimeout(() => {
      this.handle = undefined;
      // The cache is checked again: the resource may have arrived since the timer was armed.
      if (!this.hasValue()) onFired();
    }, timeoutMs);
    this.handle.unref?.();
  }

  /** The stream said something of the resource: nothing more to wait for. */
  settle(): void {
    this.due = false;
    this.stop();
  }

  /** The stream ended: its timer goes with it; with no value, the next stream owes a verdict. */
  streamEnded(): void {
    this.stop();
    this.due = !this.hasValue();
  }

  /** The entry is gone (or can never be served): no timer, now or later. */
  stop(): void {
    // Most calls find no timer (a response settles every entry it names): no clearTimeout then.
    if (this.handle === undefined) return;
    clearTimeout(this.handle);
    this.handle = undefined;
  }
}

/** A request was written on the current stream: the timers of the entries it names start. */
export function startTimers<E extends TimedEntry>(
  names: readonly string[],
  lookup: (name: string) => E | undefined,
  timeoutMs: number,
  onFired: (entry: E) => void,
): void {
  for (const name of names) {
    const entry = lookup(name);
    entry?.doesNotExist.requestWritten(timeoutMs, () => onFired(entry));
  }
}

/** A stream ended: the timers of the entries it carried stop, owing a fresh verdict. */
export function endTimers(entries: Iterable<TimedEntry>): void {
  for (const entry of entries) entry.doesNotExist.streamEnded();
}

/**
 * After a return to a higher server (A71): the timers of the dropped server's stream went with
 * it, and the new current stream owes a verdict on what it has already requested, from now.
 */
export function restartTimers<E extends TimedEntry>(
  entries: Iterable<E>,
  isRequested: (entry: E) => boolean,
  timeoutMs: number,
  onFired: (entry: E) => void,
): void {
  for (const entry of entries) {
    entry.doesNotExist.streamEnded();
    if (isRequested(entry)) entry.doesNotExist.requestWritten(timeoutMs, () => onFired(entry));
  }
}
