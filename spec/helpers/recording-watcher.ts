import { performance } from 'node:perf_hooks';
import type { ResourceWatcher, XdsError } from '../../lib';
import { EVENT_DEADLINE_MS } from './constants';
import { realClearTimeout, realSetTimeout } from './wait';

export type WatchEvent<T> =
  | { kind: 'changed'; resource: T }
  | { kind: 'error'; error: XdsError }
  | { kind: 'ambient'; error: XdsError }
  | { kind: 'update'; value: T };

type Of<T, K extends WatchEvent<T>['kind']> = Extract<WatchEvent<T>, { kind: K }>;

/**
 * Records every callback, for specs to read in order with a deadline. It is a resource watcher
 * (onResourceChanged → 'changed', onResourceError → 'error', onAmbientError → 'ambient') and a
 * cluster tree, resolver or endpoints listener (onUpdate → 'update', onError → 'error').
 * `await w.next('changed')` fails the spec if the next event is another kind or never comes.
 *
 * That nothing happened is never checked by waiting a while: `expectNothingUntil(barrier)`
 * awaits an event that comes after anything the spec means to rule out (the client's answer to
 * the server's last response: see `settled` in env.ts), and `expectNothingYet()` checks at once
 * (after ticking mock timers, whose callbacks run inside the tick).
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
  onUpdate(value: T): void {
    this.push({ kind: 'update', value });
  }
  onError(error: XdsError): void {
    this.push({ kind: 'error', error });
  }

  private push(event: WatchEvent<T>): void {
    this.events.push(event);
    this.wake?.();
  }

  /** The next unread event, which must be of `kind`. */
  async next<K extends WatchEvent<T>['kind']>(
    kind: K,
    timeoutMs = EVENT_DEADLINE_MS,
  ): Promise<Of<T, K>> {
    const event = await this.nextAny(timeoutMs).catch(() => {
      throw new Error(`no '${kind}' event within ${timeoutMs} ms`);
    });
    if (event.kind !== kind) throw new Error(`expected a '${kind}' event, got ${show(event)}`);
    return event as Of<T, K>;
  }

  /** Reads events until one of `kind` comes, skipping others (e.g. expected retries' errors). */
  async skipUntil<K extends WatchEvent<T>['kind']>(
    kind: K,
    timeoutMs = EVENT_DEADLINE_MS,
  ): Promise<Of<T, K>> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const event = await this.nextAny(Math.max(1, deadline - performance.now()));
      if (event.kind === kind) return event as Of<T, K>;
    }
  }

  /** The value of the next event, a listener's `onUpdate`. */
  async update(timeoutMs?: number): Promise<T> {
    return (await this.next('update', timeoutMs)).value;
  }

  /** The error of the next event, an `onError` or `onResourceError`. */
  async error(timeoutMs?: number): Promise<XdsError> {
    return (await this.next('error', timeoutMs)).error;
  }

  /** Skips updates until one satisfies `accept`; any other event fails. */
  async updateWhere(accept: (value: T) => boolean, timeoutMs = EVENT_DEADLINE_MS): Promise<T> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const value = await this.update(Math.max(1, deadline - performance.now()));
      if (accept(value)) return value;
    }
  }

  /** Fails if any event is unread now. */
  expectNothingYet(): void {
    if (this.consumed !== this.events.length) {
      const extra = this.events.slice(this.consumed).map(show);
      throw new Error(`expected no event, got: ${extra.join('; ')}`);
    }
  }

  /**
   * Awaits `barrier`, something that happens after every event the spec rules out, then fails
   * if any event is unread.
   */
  async expectNothingUntil(barrier: Promise<unknown>): Promise<void> {
    await barrier;
    this.expectNothingYet();
  }

  private async nextAny(timeoutMs: number): Promise<WatchEvent<T>> {
    const deadline = performance.now() + timeoutMs;
    while (this.consumed >= this.events.length) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`no event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = realSetTimeout(resolve, left);
        this.wake = () => {
          realClearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    return this.events[this.consumed++]!;
  }
}

function show<T>(event: WatchEvent<T>): string {
  return event.kind === 'error' || event.kind === 'ambient'
    ? `'${event.kind}': ${event.error.message}`
    : `'${event.kind}'`;
}
