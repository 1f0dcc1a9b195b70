// The logical DNS discovery mechanism of gRFC A37: resolve `host:port`, put every address in one
// priority with one empty locality; re-resolve on request and on a timer.
import { promises as dnsPromises } from 'node:dns';
import { status } from '@grpc/grpc-js';
import { XdsError } from '../errors';
import type { LocalityEndpoints } from '../resources/endpoint/update';
import type { DiscoveryResult } from './discovery';
import { EMPTY_LOCALITY } from './priority-names';

/** Resolves a host name to IP address literals. Rejects (or returns none) when it cannot. */
export type DnsResolver = (host: string) => Promise<string[]>;

/** Node's resolver (getaddrinfo, so /etc/hosts applies), every address of every family. */
export const defaultDnsResolver: DnsResolver = async (host) =>
  (await dnsPromises.lookup(host, { all: true })).map((entry) => entry.address);

/** `host:port`, IPv6 literals in brackets; undefined if it is not that. */
export function parseHostPort(target: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(target);
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: match[1] ?? match[2]!, port };
}

export class LogicalDnsDiscovery {
  result: DiscoveryResult = { kind: 'pending' };
  private readonly target: { host: string; port: number } | undefined;
  private readonly timer: NodeJS.Timeout | undefined;
  private inFlight = false;
  private again = false;
  private closed = false;
  private lastAddresses: string | undefined;

  constructor(
    private readonly cluster: string,
    private readonly dnsHostname: string,
    private readonly resolver: DnsResolver,
    refreshIntervalMs: number,
    private readonly onResult: () => void,
  ) {
    this.target = parseHostPort(dnsHostname);
    if (!this.target) {
      this.result = { kind: 'error', error: this.error(`not a valid host:port`) };
      queueMicrotask(() => !this.closed && this.onResult());
      return;
    }
    this.resolveNow();
    // Records change without anybody asking; the timer must not keep the process alive.
    this.timer = setInterval(() => this.inFlight || this.resolveNow(), refreshIntervalMs);
    this.timer.unref();
  }

  /**
   * Resolves again; a request during a resolution runs once it ends (requests coalesce). The
   * timer skips its tick instead, so a slow DNS server is not asked back to back.
   */
  resolveNow(): void {
    if (this.closed || !this.target) return;
    if (this.inFlight) {
      this.again = true;
      return;
    }
    this.inFlight = true;
    const { host, port } = this.target;
    let pending: Promise<string[]>;
    try {
      pending = Promise.resolve(this.resolver(host));
    } catch (e) {
      pending = Promise.reject(e);
    }
    pending
      .then(
        (addresses) => this.onAddresses(addresses, port),
        (e: unknown) => this.onFailure(e),
      )
      .finally(() => {
        this.inFlight = false;
        if (this.again) {
          this.again = false;
          this.resolveNow();
        }
      });
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
  }

  private onAddresses(addresses: readonly string[], port: number): void {
    if (this.closed) return;
    const key = addresses.join(',');
    // A periodic refresh that changed nothing is not an update.
    if (this.result.kind === 'ok' && key === this.lastAddresses) return;
    this.lastAddresses = key;
    const locality: LocalityEndpoints = Object.freeze({
      locality: EMPTY_LOCALITY,
      weight: 1,
      endpoints: Object.freeze(
        addresses.map((address) =>
          Object.freeze({ address, port, healthStatus: 'UNKNOWN' as const, weight: 1 }),
        ),
      ),
    });
    this.result = { kind: 'ok', priorities: Object.freeze([Object.freeze([locality])]) };
    this.onResult();
  }

  private onFailure(e: unknown): void {
    if (this.closed) return;
    // After a success the last addresses stay: a DNS hiccup must not empty the priority.
    if (this.result.kind === 'ok') return;
    const error = this.error(`resolution failed: ${e instanceof Error ? e.message : String(e)}`, e);
    if (this.result.kind === 'error' && this.result.error.message === error.message) return;
    this.result = { kind: 'error', error };
    this.onResult();
  }

  private error(what: string, cause?: unknown): XdsError {
    return new XdsError(
      status.UNAVAILABLE,
      `cluster "${this.cluster}": DNS name "${this.dnsHostname}": ${what}`,
      cause === undefined ? {} : { cause },
    );
  }
}
