// The leak check, preloaded into every spec file's process by scripts/run-specs.js (--require).
//
// Once a file's tests are over, nothing they started may still be running: a timer, socket,
// server or child process left behind keeps the process alive. A clean file's process exits by
// itself as soon as its last handle closes, and never waits for anything here. A file whose
// process is still alive LEAK_GRACE_MS after its tests ended fails the run: the message names
// the file and the kinds of handle left (process.getActiveResourcesInfo()), and the process
// exits with code 1, which the test runner reports as a failure of that file. The grace is an
// upper bound for asynchronous closes (sockets, servers), not a delay.
import * as path from 'node:path';
import { after } from 'node:test';

/** How long a file's handles may take to close after its tests ended. */
export const LEAK_GRACE_MS = Number(process.env['SPEC_LEAK_GRACE_MS'] ?? 3000);
/** Taken before any spec loads: a spec that leaves mock timers on cannot stop the deadline. */
const realSetTimeout = globalThis.setTimeout;

/** `['Timeout', 'Timeout', 'TCPSocketWrap']` → `Map { Timeout → 2, TCPSocketWrap → 1 }`. */
function countKinds(kinds: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of kinds) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/**
 * File-system requests in flight end by themselves (tsx writing its cache on a busy machine):
 * never a leak, so never named as one.
 */
const TRANSIENT = new Set(['FSReqCallback', 'FSReqPromise']);

/** What is active now and was not before the file ran (the runner's own pipes), as text. */
export function describeLeaks(baseline: ReadonlyMap<string, number>): string {
  const parts: string[] = [];
  for (const [kind, count] of countKinds(process.getActiveResourcesInfo())) {
    if (TRANSIENT.has(kind)) continue;
    const extra = count - (baseline.get(kind) ?? 0);
    if (extra > 0) parts.push(extra === 1 ? kind : `${kind} ×${extra}`);
  }
  return parts.sort().join(', ');
}

// Only in a process the test runner started for one file (not in the runner itself).
if (process.env['NODE_TEST_CONTEXT'] !== undefined) {
  const baseline = countKinds(process.getActiveResourcesInfo());
  const file = path.relative(process.cwd(), process.argv[1] ?? '?');
  // Registered before the file is loaded, so it runs first of the file's top-level `after`
  // hooks: the grace covers the others too (a server closed in an `after`).
  after(() => {
    const deadline = realSetTimeout(() => {
      const leaks = describeLeaks(baseline) || 'a handle getActiveResourcesInfo() does not name';
      process.stderr.write(
        `leak check: ${file} left active handles ${LEAK_GRACE_MS} ms after its tests ended: ` +
          `${leaks}. Close every client, server, timer and socket a spec starts.\n`,
      );
      process.exit(1);
    }, LEAK_GRACE_MS);
    // The deadline itself must not keep the process alive: a clean file exits at once.
    deadline.unref();
  });
}
