import type { ResourceWatcher, XdsError } from '../../lib';
import { EVENT_DEADLINE_MS, EXPECT_NOTHING_MS } from './constants';

export type WatchEvent<T> =
  | { kind: 'changed'; resource: T }
  | { kind: 'error'; error: XdsError }
  | { kind: 'ambient'; error: XdsError };

/**
 * A watcher that records every callback, for specs to await in order with a deadline:
 * `await w.next('changed')` fails the spec if the next event is another kind or never comes.
 */
export class RecordingWatcher<T> implements ResourceWatcher<T> {
  readonly events: WatchEvent<T>[] = [];
  private consumed = 0;
  private wake: (() => void) | undefined;

  onResourceChanged(resource: T): void {
    this.push({ kind: 'changed', resource });
  }
  onResourceError(error: XdsError): void {
    this.push({ kind: 'error', error });
  }
  onAmbientError(error: XdsError): void {
    this.push({ kind: 'ambient', error });
  }

  private push(event: WatchEvent<T>): void {
    this.events.push(event);
    this.wake?.();
  }

  /** The next unread event, which must be of `kind`. */
  async next<K extends WatchEvent<T>['kind']>(
    kind: K,
    timeoutMs = EVENT_DEADLINE_MS,
  ): Promise<Extract<WatchEvent<T>, { kind: K }>> {
    const event = await this.nextAny(timeoutMs).catch(() => {
      throw new Error(`no '${kind}' event within ${timeoutMs} ms`);
    });
    if (event.kind !== kind) {
      const detail = event.kind === 'changed' ? '' : `: ${event.error.message}`;
      throw new Error(`expected a '${kind}' event, got '${event.kind}'${detail}`);
    }
    return event as Extract<WatchEvent<T>, { kind: K }>;
  }

  /** Reads events until one of `kind` comes, skipping others (e.g. expected retries' errors). */
  async skipUntil<K extends WatchEvent<T>['kind']>(
    kind: K,
    timeoutMs = EVENT_DEADLINE_MS,
  ): Promise<Extract<WatchEvent<T>, { kind: K }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const left = Math.max(1, deadline - Date.now());
      const event = await this.nextAny(left);
      if (event.kind === kind) return event as Extract<WatchEvent<T>, { kind: K }>;
    }
  }

  private async nextAny(timeoutMs: number): Promise<WatchEvent<T>> {
    const deadline = Date.now() + timeoutMs;
    while (this.consumed >= this.events.length) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    return this.events[this.consumed++]!;
  }

  /** Fails if any event arrives within `ms`. */
  async expectNothing(ms = EXPECT_NOTHING_MS): Promise<void> {
    const before = this.events.length;
    await new Promise((resolve) => setTimeout(resolve, ms));
    if (this.events.length !== before || this.consumed !== this.events.length) {
      const extra = this.events.slice(this.consumed).map((e) => e.kind);
      throw new Error(`expected no event, got: ${extra.join(', ')}`);
    }
  }
}
