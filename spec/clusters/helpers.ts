// Helpers for the cluster specs: a listener that records, waits with deadlines, a fake DNS.
import type { XdsError } from '../../lib';
import type { DnsResolver, Priority } from '../../lib/clusters';
import type { ManagementServer } from '../../lib/testing';
import { EVENT_DEADLINE_MS, EXPECT_NOTHING_MS } from '../helpers/constants';
import { CDS } from '../helpers/env';

export type Event<T> = { kind: 'update'; value: T } | { kind: 'error'; error: XdsError };

/**
 * Records `onUpdate` / `onError` calls of a tree, resolver or joined listener, for specs to
 * await in order: `await rec.next('update')` fails if the next call is an error or never comes.
 */
export class Recorder<T> {
  readonly events: Event<T>[] = [];
  private consumed = 0;
  private wake: (() => void) | undefined;

  readonly onUpdate = (value: T): void => this.push({ kind: 'update', value });
  readonly onError = (error: XdsError): void => this.push({ kind: 'error', error });

  private push(event: Event<T>): void {
    this.events.push(event);
    this.wake?.();
  }

  async next<K extends Event<T>['kind']>(
    kind: K,
    timeoutMs = EVENT_DEADLINE_MS,
  ): Promise<Extract<Event<T>, { kind: K }>> {
    const deadline = Date.now() + timeoutMs;
    while (this.consumed >= this.events.length) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no '${kind}' within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    const event = this.events[this.consumed++]!;
    if (event.kind !== kind) {
      const detail = event.kind === 'error' ? `: ${event.error.message}` : '';
      throw new Error(`expected '${kind}', got '${event.kind}'${detail}`);
    }
    return event as Extract<Event<T>, { kind: K }>;
  }

  async update(timeoutMs?: number): Promise<T> {
    return (await this.next('update', timeoutMs)).value;
  }

  async error(timeoutMs?: number): Promise<XdsError> {
    return (await this.next('error', timeoutMs)).error;
  }

  /** Skips updates until one satisfies `accept` (errors still fail). */
  async updateWhere(accept: (value: T) => boolean, timeoutMs = EVENT_DEADLINE_MS): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await this.update(Math.max(1, deadline - Date.now()));
      if (accept(value)) return value;
    }
  }

  /** Fails if anything arrives within `ms`. */
  async expectNothing(ms = EXPECT_NOTHING_MS): Promise<void> {
    await delay(ms);
    if (this.consumed !== this.events.length) {
      const extra = this.events.slice(this.consumed).map((e) => e.kind);
      throw new Error(`expected nothing, got: ${extra.join(', ')}`);
    }
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` until it returns something other than undefined, or fails after the deadline. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined,
  timeoutMs = EVENT_DEADLINE_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await delay(10);
  }
}

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
    `CDS subscription ${want}, last was ${JSON.stringify(subscribedClusters(server))}`,
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
