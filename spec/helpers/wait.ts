// Waiting in specs: for a condition, with a deadline that fails the spec. Never for a while.
import { performance } from 'node:perf_hooks';
import { EVENT_DEADLINE_MS } from './constants';

/**
 * The timer functions as they were when the specs loaded. Deadlines use them (and
 * performance.now(), never Date), so they keep running while a spec has node:test's mock timers
 * enabled, which replace the globals.
 */
export const realSetTimeout = globalThis.setTimeout;
export const realClearTimeout = globalThis.clearTimeout;

/** How often `waitFor` looks again at a condition nothing announces (a server's stream count). */
const POLL_MS = 5;

/**
 * Resolves with the first result of `probe` other than undefined; fails after the deadline,
 * saying `what` it waited for (a function: built when it fails, with the state then). `probe`
 * may be async (it may send an RPC): the next probe starts after it settles. This is the one
 * polling loop of the specs; every other wait is built on it.
 */
export async function waitFor<T>(
  what: string | (() => string),
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = EVENT_DEADLINE_MS,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() >= deadline) {
      const text = typeof what === 'string' ? what : what();
      throw new Error(`timed out after ${timeoutMs} ms: ${text}`);
    }
    await new Promise((resolve) => realSetTimeout(resolve, POLL_MS));
  }
}

/** Waits until `done()` holds; fails after the deadline. */
export async function until(
  what: string | (() => string),
  done: () => boolean | Promise<boolean>,
  timeoutMs = EVENT_DEADLINE_MS,
): Promise<void> {
  await waitFor(what, async () => ((await done()) ? true : undefined), timeoutMs);
}
