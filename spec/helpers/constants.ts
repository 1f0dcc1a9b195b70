/**
 * The does-not-exist timer every spec client gets unless it asks for another (env.ts,
 * fleet.ts): far longer than EVENT_DEADLINE_MS, so that a loaded machine delaying a response
 * never fires it, and a spec that waits for it to expire without saying so fails on its
 * event deadline instead of passing or failing with the load. Under mock timers, tick it.
 */
export const TEST_RESOURCE_TIMEOUT_MS = 30_000;
/**
 * The does-not-exist timer of a spec that waits, on real timers, for it to expire: short, so
 * no spec waits long. Give it only to a client whose resources are meant to be missing: a
 * response the machine's load delays past it would fail the spec.
 */
export const EXPIRY_TIMEOUT_MS = 500;
/** The longest any single expected event may take. */
export const EVENT_DEADLINE_MS = 5000;
/** Backoff for specs that reconnect: fast and without jitter. */
export const TEST_BACKOFF = { initialMs: 50, multiplier: 2, maxMs: 1000, jitter: 0 } as const;
