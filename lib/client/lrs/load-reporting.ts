// The process's load reporting: one LRS stream per {server, node}, shared by every channel and
// policy that reports to it, opened with its first user and closed with its last. (A stream
// carries one node, sent on its first request, so channels whose bootstraps name different
// nodes have a stream each.)

import { serverKey, type NodeConfig, type XdsServerConfig } from '../../bootstrap';
import type { ClusterLoad } from './load-store';
import { LrsStream } from './lrs-stream';

interface Entry {
  readonly stream: LrsStream;
  users: number;
}

const streams = new Map<string, Entry>();

/** A use of the load store of one {cluster, EDS service name}; `release()` is idempotent. */
export interface LoadReportingLease {
  readonly load: ClusterLoad;
  release(): void;
}

/**
 * The counters `cluster` (with `edsServiceName`) reports to `server` as `node`: the stream to
 * that server is opened if it is not open yet, and stays open until every lease is released.
 */
export function reportLoad(
  server: XdsServerConfig,
  node: NodeConfig,
  cluster: string,
  edsServiceName: string | undefined,
): LoadReportingLease {
  const key = JSON.stringify([serverKey(server), node]);
  let entry = streams.get(key);
  if (!entry) {
    entry = { stream: new LrsStream(server, node), users: 0 };
    streams.set(key, entry);
    entry.stream.start();
  }
  entry.users++;
  const held = entry;
  const load = held.stream.store.acquire(cluster, edsServiceName);
  let released = false;
  return {
    load,
    release() {
      if (released) return;
      released = true;
      held.stream.store.release(load);
      if (--held.users > 0) return;
      if (streams.get(key) === held) streams.delete(key);
      held.stream.close();
    },
  };
}

/** How many LRS streams the process holds open (for tests: every channel closed means none). */
export function openLoadReportingStreams(): number {
  return streams.size;
}
