/** The does-not-exist timer in specs: short, so no spec ever waits 15 s. */
export const TEST_RESOURCE_TIMEOUT_MS = 500;
/** The longest any single expected event may take. */
export const EVENT_DEADLINE_MS = 5000;
/** Backoff for specs that reconnect: fast and without jitter. */
export const TEST_BACKOFF = { initialMs: 50, multiplier: 2, maxMs: 1000, jitter: 0 } as const;
