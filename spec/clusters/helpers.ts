// Helpers for the cluster specs: subscriptions seen by the server, a fake DNS, priorities in
// short. (Listeners are recorded by spec/helpers/recording-watcher.ts, as watchers are.)
import type { DnsResolver, Priority } from '../../lib';
import type { ManagementServer } from '../../lib/testing';
import { CDS } from '../helpers/env';
import { waitFor } from '../helpers/wait';

/** The cluster names of the last CDS request (sorted): what the client is subscribed to. */
export function subscribedClusters(server: ManagementServer): string[] | undefined {
  const cds = server.requests.filter((r) => r.typeUrl === CDS);
  const last = cds[cds.length - 1];
  return last && [...last.resourceNames].sort();
}

/** Waits until the client's CDS subscription is exactly `names`. */
export function waitForSubscription(server: ManagementServer, names: string[]): Promise<true> {
  const want = JSON.stringify([...names].sort());
  // Nothing subscribed: the client closes its stream rather than send an empty list.
  const done = () =>
    names.length === 0
      ? server.streamCount === 0
      : JSON.stringify(subscribedClusters(server)) === want;
  return waitFor(
    () => `CDS subscription ${want}, last was ${JSON.stringify(subscribedClusters(server))}`,
    () => (done() ? true : undefined),
  );
}

/**
 * A DnsResolver that answers from a table; a host mapped to an Error (or to a function that
 * returns one) rejects with it. `calls` counts lookups per host.
 */
export function fakeDns(
  table: Record<string, string[] | Error | ((call: number) => string[] | Error)>,
): DnsResolver & { calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const resolver = async (host: string) => {
    const call = (calls.get(host) ?? 0) + 1;
    calls.set(host, call);
    const entry = table[host];
    const answer = typeof entry === 'function' ? entry(call) : entry;
    if (answer === undefined) throw new Error(`ENOTFOUND ${host}`);
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return Object.assign(resolver, { calls });
}

/** A priority reduced to what most specs compare: name, cluster, policy and addresses. */
export function summarize(priority: Priority) {
  return {
    name: priority.name,
    cluster: priority.cluster,
    childPolicy: priority.childPolicy,
    localities: priority.localities.map((l) => ({
      locality: `${l.locality.region}/${l.locality.zone}/${l.locality.subZone}`,
      addresses: l.endpoints.map((e) => `${e.address}:${e.port}`),
    })),
  };
}
