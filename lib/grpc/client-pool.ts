// One XdsClient per (bootstrap, target authority), shared by the channels that use it and
// closed with the last of them (gRFC A71's sharing rule), so a process that closes its
// channels has no xDS stream left and exits by itself.

import { XdsClient } from '../xds-client';
import { grpcLbPolicies } from './lb-policies';

interface PoolEntry {
  /** Its key in the pool: the one copy of it (a channel's lease keeps the entry, not a key). */
  readonly key: string;
  readonly client: XdsClient;
  users: number;
}

const pool = new Map<string, PoolEntry>();

/** A use of a shared client; `release()` is idempotent. */
export interface ClientLease {
  readonly client: XdsClient;
  release(): void;
}

/** What a channel asks of its client (from its channel options). */
export interface ClientSettings {
  /** An object, JSON text, or undefined for the environment variables. */
  readonly bootstrap: object | string | undefined;
  readonly resourceTimeoutMs?: number | undefined;
}

/**
 * The shared client for these settings and target authority ('' for none). Throws XdsError
 * for a bad bootstrap or option.
 */
export function leaseClient(settings: ClientSettings, authority: string): ClientLease {
  const { bootstrap, resourceTimeoutMs } = settings;
  const key = JSON.stringify([
    typeof bootstrap === 'object' ? JSON.stringify(bootstrap) : (bootstrap ?? null),
    resourceTimeoutMs ?? null,
    authority,
  ]);
  let entry = pool.get(key);
  if (!entry) {
    const client = new XdsClient({
      // Clusters may name the application's own grpc-js LB policies (gRFC A52).
      lbPolicies: grpcLbPolicies,
      ...(bootstrap === undefined ? {} : { bootstrap }),
      ...(resourceTimeoutMs === undefined ? {} : { resourceTimeoutMs }),
      // CSDS's client_scope (gRFC A71): the target authority whose channels and servers share it.
      clientScope: `xds://${authority}/`,
    });
    entry = { key, client, users: 0 };
    pool.set(key, entry);
  }
  entry.users++;
  return new Lease(entry);
}

/** One channel's or server's use of a pool entry (a class: no closure, no key kept per use). */
class Lease implements ClientLease {
  private released = false;

  constructor(private readonly entry: PoolEntry) {}

  get client(): XdsClient {
    return this.entry.client;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    const entry = this.entry;
    if (--entry.users > 0) return;
    if (pool.get(entry.key) === entry) pool.delete(entry.key);
    entry.client.close();
  }
}

/** How many shared clients are open (for tests: every channel closed means none). */
export function openClientCount(): number {
  return pool.size;
}
