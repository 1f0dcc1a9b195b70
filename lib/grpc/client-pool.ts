// One XdsClient per (bootstrap, target authority), shared by the channels that use it and
// closed with the last of them (gRFC A71's sharing rule), so a process that closes its
// channels has no xDS stream left and exits by itself.

import { XdsClient } from '../xds-client';

interface PoolEntry {
  readonly client: XdsClient;
  users: number;
}

const pool = new Map<string, PoolEntry>();

/** A use of a shared client; `release()` is idempotent. */
export interface ClientLease {
  readonly client: XdsClient;
  release(): void;
}

/**
 * The shared client for this bootstrap (an object, JSON text, or undefined for the environment
 * variables) and target authority ('' for none). Throws XdsError for a bad bootstrap.
 */
export function leaseClient(
  bootstrap: object | string | undefined,
  authority: string,
): ClientLease {
  const key = JSON.stringify([
    bootstrap === undefined
      ? null
      : typeof bootstrap === 'string'
        ? bootstrap
        : JSON.stringify(bootstrap),
    authority,
  ]);
  let entry = pool.get(key);
  if (!entry) {
    const client = new XdsClient(bootstrap === undefined ? {} : { bootstrap });
    entry = { client, users: 0 };
    pool.set(key, entry);
  }
  entry.users++;
  const leased = entry;
  let released = false;
  return {
    client: leased.client,
    release() {
      if (released) return;
      released = true;
      if (--leased.users > 0) return;
      if (pool.get(key) === leased) pool.delete(key);
      leased.client.close();
    },
  };
}

/** How many shared clients are open (for tests: every channel closed means none). */
export function openClientCount(): number {
  return pool.size;
}
