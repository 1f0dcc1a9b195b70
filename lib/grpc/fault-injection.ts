// gRFC A33: client-side fault injection. Each fault filter of the Listener's HTTP filter chain,
// with the most specific typed_per_filter_config override for the RPC's route (A39), becomes a
// dynamic filter of that RPC: a delay before anything is sent, then an abort with a status,
// each drawn independently. max_active_faults counts faulted RPCs across the process.

import { Metadata, experimental, type StatusObject } from '@grpc/grpc-js';
import type { HttpConnectionManagerConfig } from '../resources/listener';
import { PassThroughFilter } from './pass-through-filter';
import { mostSpecificOverride, overrideLevels } from './filter-overrides';
import {
  grpcCodeForHttpStatus,
  sanitizeGrpcCode,
  type FaultInjectionConfig,
  type FaultPercentage,
  type Route,
  type VirtualHost,
} from '../resources/route-config';

type Filter = experimental.Filter;
type FilterFactory = experimental.FilterFactory<Filter>;

export const DELAY_HEADER = 'x-envoy-fault-delay-request';
export const DELAY_PERCENTAGE_HEADER = 'x-envoy-fault-delay-request-percentage';
export const ABORT_HTTP_HEADER = 'x-envoy-fault-abort-request';
export const ABORT_GRPC_HEADER = 'x-envoy-fault-abort-grpc-request';
export const ABORT_PERCENTAGE_HEADER = 'x-envoy-fault-abort-request-percentage';

/** The details of an aborted RPC (as C-core and grpc-js-xds word it). */
export const ABORT_DETAILS = 'Fault injected';

/** The longest timer Node keeps (a longer one would fire at once). */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** RPCs delayed by a fault right now, in the whole process (A33's gauge). */
let activeFaults = 0;

/** How many RPCs a fault is delaying now, process-wide. */
export function activeFaultCount(): number {
  return activeFaults;
}

/** What the dice said for one RPC. */
export interface FaultDecision {
  /** 0: no delay. */
  readonly delayMs: number;
  /** The status code to abort with (0 is OK), or undefined: no abort. */
  readonly abortCode: number | undefined;
}

const NO_FAULT: FaultDecision = Object.freeze({ delayMs: 0, abortCode: undefined });

/**
 * Decides the faults of one RPC (pure but for `random`, which returns [0, 1)). The delay is
 * drawn first, then the abort, each with its own number and only when its percentage is
 * strictly between 0 and 100 %. Header-driven faults read the RPC's metadata; an invalid header
 * value is ignored, and a percentage header only lowers the configured numerator (A33).
 */
export function decideFault(
  config: FaultInjectionConfig,
  metadata: Metadata,
  random: () => number,
): FaultDecision {
  let delayMs = 0;
  const delay = config.delay;
  if (delay) {
    const ms = delay.type === 'fixed' ? delay.delayMs : headerInteger(metadata, DELAY_HEADER);
    if (ms !== undefined && ms > 0) {
      const numerator = lowered(delay.percentage, metadata, DELAY_PERCENTAGE_HEADER, delay.type);
      if (roll(numerator, delay.percentage.denominator, random)) delayMs = ms;
    }
  }
  let abortCode: number | undefined;
  const abort = config.abort;
  if (abort) {
    const code = abort.type === 'header' ? headerAbortCode(metadata) : abort.code;
    if (code !== undefined) {
      const numerator = lowered(abort.percentage, metadata, ABORT_PERCENTAGE_HEADER, abort.type);
      if (roll(numerator, abort.percentage.denominator, random)) abortCode = code;
    }
  }
  return delayMs === 0 && abortCode === undefined ? NO_FAULT : { delayMs, abortCode };
}

/**
 * The status of a header abort: the HTTP status header (200 to 599, mapped) wins, as in
 * Envoy; else the gRPC code header (above 16: UNKNOWN); else none.
 */
function headerAbortCode(metadata: Metadata): number | undefined {
  const http = headerInteger(metadata, ABORT_HTTP_HEADER, (n) => n >= 200 && n <= 599);
  if (http !== undefined) return grpcCodeForHttpStatus(http);
  const grpc = headerInteger(metadata, ABORT_GRPC_HEADER);
  return grpc === undefined ? undefined : sanitizeGrpcCode(grpc);
}

/** The configured numerator, lowered by the percentage header when the fault is header-driven. */
function lowered(
  percentage: FaultPercentage,
  metadata: Metadata,
  header: string,
  type: string,
): number {
  if (type !== 'header') return percentage.numerator;
  const fromHeader = headerInteger(metadata, header);
  return fromHeader === undefined
    ? percentage.numerator
    : Math.min(percentage.numerator, fromHeader);
}

const DIGITS = /^\d{1,15}$/;

/** The first value of `key` that is a non-negative decimal integer (and passes `ok`). */
function headerInteger(
  metadata: Metadata,
  key: string,
  ok: (n: number) => boolean = () => true,
): number | undefined {
  for (const value of metadata.get(key)) {
    if (typeof value !== 'string') continue;
    const text = value.trim();
    if (!DIGITS.test(text)) continue;
    const n = Number(text);
    if (ok(n)) return n;
  }
  return undefined;
}

/** True for `numerator` out of `denominator` of the draws. */
function roll(numerator: number, denominator: number, random: () => number): boolean {
  if (numerator <= 0) return false;
  if (numerator >= denominator) return true;
  const r = random();
  // A source that strays outside [0, 1) still decides.
  const point = Math.floor((r > 0 ? Math.min(r, 1 - Number.EPSILON / 2) : 0) * denominator);
  return point < numerator;
}

/**
 * The fault filters of a channel's configuration: the Listener's fault filters, and the
 * virtual host whose overrides apply. Undefined from `for` when the Listener has no fault
 * filter, so that RPCs pay nothing.
 */
export class FaultInjection {
  /** Per route, per cluster: the RPC's fault filter factories (often none). */
  private readonly cache = new Map<Route, Map<string, readonly FilterFactory[]>>();

  private constructor(
    private readonly filters: readonly {
      readonly name: string;
      readonly config: FaultInjectionConfig;
    }[],
    private readonly virtualHost: VirtualHost,
    private readonly random: () => number,
  ) {}

  static for(
    hcm: HttpConnectionManagerConfig,
    virtualHost: VirtualHost,
    random: () => number = Math.random,
  ): FaultInjection | undefined {
    const filters = hcm.httpFilters.flatMap((f) =>
      f.fault ? [{ name: f.name, config: f.fault }] : [],
    );
    return filters.length === 0 ? undefined : new FaultInjection(filters, virtualHost, random);
  }

  /** The dynamic filter factories of an RPC that took `route` to `cluster`. */
  factoriesFor(route: Route, cluster: string): readonly FilterFactory[] {
    let byCluster = this.cache.get(route);
    if (!byCluster) this.cache.set(route, (byCluster = new Map()));
    let factories = byCluster.get(cluster);
    if (!factories) {
      factories = this.build(route, cluster);
      byCluster.set(cluster, factories);
    }
    return factories;
  }

  private build(route: Route, cluster: string): readonly FilterFactory[] {
    const levels = overrideLevels(route, cluster, this.virtualHost);
    const factories: FilterFactory[] = [];
    for (const filter of this.filters) {
      const config = mostSpecificOverride(filter.name, levels, (o) => o.fault) ?? filter.config;
      if (injectsSomething(config)) factories.push(new FaultFilterFactory(config, this.random));
    }
    return factories;
  }
}

function injectsSomething(config: FaultInjectionConfig): boolean {
  if (config.maxActiveFaults === 0) return false;
  const delay = config.delay;
  const delays = delay !== undefined && (delay.type === 'header' || delay.delayMs > 0);
  return delays || config.abort !== undefined;
}

class FaultFilterFactory implements FilterFactory {
  constructor(
    private readonly config: FaultInjectionConfig,
    private readonly random: () => number,
  ) {}

  createFilter(): Filter {
    return new FaultFilter(this.config, this.random);
  }
}

/**
 * One RPC's faults. The decision is taken when its metadata is sent, before anything leaves
 * the client. A delay holds the metadata back; the call's end (its deadline, a cancellation)
 * reaches `receiveTrailers`, which stops the delay and fails the held metadata with that
 * status, so no attempt starts after the RPC is over.
 */
class FaultFilter extends PassThroughFilter {
  private delay: { timer: NodeJS.Timeout; reject: (status: StatusObject) => void } | undefined;
  private holdsFault = false;
  private ended: StatusObject | undefined;

  constructor(
    private readonly config: FaultInjectionConfig,
    private readonly random: () => number,
  ) {
    super();
  }

  override sendMetadata(metadata: Promise<Metadata>): Promise<Metadata> {
    return metadata.then((md) => this.inject(md));
  }

  private inject(metadata: Metadata): Metadata | Promise<Metadata> {
    if (this.ended) throw this.ended;
    const { delayMs, abortCode } = decideFault(this.config, metadata, this.random);
    const limit = this.config.maxActiveFaults ?? Infinity;
    if (delayMs > 0 && activeFaults < limit) {
      activeFaults++;
      this.holdsFault = true;
      return new Promise<Metadata>((resolve, reject) => {
        const timer = setTimeout(
          () => {
            this.delay = undefined;
            this.release();
            // Delayed, so an abort drawn for this RPC happens whatever the count now.
            if (abortCode === undefined) resolve(metadata);
            else reject(abortStatus(abortCode));
          },
          Math.min(delayMs, MAX_DELAY_MS),
        );
        this.delay = { timer, reject };
      });
    }
    if (abortCode !== undefined && activeFaults < limit) throw abortStatus(abortCode);
    return metadata;
  }

  private release(): void {
    if (!this.holdsFault) return;
    this.holdsFault = false;
    activeFaults--;
  }

  override receiveTrailers(status: StatusObject): StatusObject {
    this.ended = status;
    const delay = this.delay;
    if (delay) {
      this.delay = undefined;
      clearTimeout(delay.timer);
      this.release();
      delay.reject(status);
    }
    return status;
  }
}

function abortStatus(code: number): StatusObject {
  return { code, details: ABORT_DETAILS, metadata: new Metadata() };
}
