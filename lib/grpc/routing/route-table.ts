// The per-RPC routing decision of the grpc plugin (gRFC A28, A31, A63): the first route of the
// virtual host whose path, headers and runtime fraction all match decides the cluster and the
// timeout. Pure: no I/O, no state beyond a compile cache; the ConfigSelector calls `decide`.
import type { Metadata } from '@grpc/grpc-js';
import type { Route, RouteAction, VirtualHost } from '../../resources/route-config';
import { compileHeaderMatch, type HeaderTest } from './headers';
import { compilePathMatch, type PathTest } from './path';

export type RouteDecision =
  | {
      readonly kind: 'cluster';
      readonly cluster: string;
      readonly route: Route;
      /** gRFC A31 timeout for this RPC in ms; undefined = no limit. */
      readonly timeoutMs: number | undefined;
    }
  | { readonly kind: 'fail'; readonly message: string };

/** A route ready to evaluate, or the reason it cannot be (RPCs that reach it fail). */
type CompiledRoute =
  | {
      readonly route: Route;
      readonly label: string;
      readonly path: PathTest;
      readonly headers: readonly HeaderTest[];
    }
  | { readonly route: Route; readonly label: string; readonly broken: string };

/** Compiled routes per VirtualHost object, and the tables built on them per HCM timeout. */
interface CacheEntry {
  readonly routes: readonly CompiledRoute[];
  readonly tables: Map<number | undefined, RouteTable>;
}

// Keyed by the frozen VirtualHost object: the client hands out the same object until the
// RouteConfiguration really changes, and an entry goes with its VirtualHost.
const cache = new WeakMap<VirtualHost, CacheEntry>();

const PER_MILLION = 1_000_000;

export class RouteTable {
  private constructor(
    private readonly virtualHostName: string,
    private readonly routes: readonly CompiledRoute[],
    /** The HCM's max stream duration, undefined when there is no limit. */
    private readonly hcmTimeoutMs: number | undefined,
  ) {}

  /**
   * The table for a virtual host and its Listener's `max_stream_duration` (ms; 0 or undefined
   * means no limit). Compiled once per VirtualHost object, so a re-delivered configuration does
   * not recompile its regexes.
   */
  static for(virtualHost: VirtualHost, hcmMaxStreamDurationMs: number | undefined): RouteTable {
    const hcm =
      hcmMaxStreamDurationMs !== undefined && hcmMaxStreamDurationMs > 0
        ? hcmMaxStreamDurationMs
        : undefined;
    let entry = cache.get(virtualHost);
    if (!entry) {
      entry = { routes: compileRoutes(virtualHost), tables: new Map() };
      cache.set(virtualHost, entry);
    }
    let table = entry.tables.get(hcm);
    if (!table) {
      table = new RouteTable(virtualHost.name, entry.routes, hcm);
      entry.tables.set(hcm, table);
    }
    return table;
  }

  /**
   * Routes one RPC. `path` is '/pkg.Service/Method'; `metadata` the call's metadata as the
   * ConfigSelector sees it. `random` returns a number in [0, 1): one draw per runtime fraction
   * reached and one per weighted-cluster pick. Never throws: anything unexpected is a `fail`.
   */
  decide(path: string, metadata: Metadata, random: () => number = Math.random): RouteDecision {
    try {
      const found = this.match(path, metadata, random);
      return 'message' in found ? fail(found.message) : this.act(found.route, found.label, random);
    } catch (e) {
      // grpc-js does not catch exceptions from a ConfigSelector; a bug here must fail one RPC,
      // not the channel.
      const why = e instanceof Error ? e.message : String(e);
      return fail(`routing in virtual host ${JSON.stringify(this.virtualHostName)} failed: ${why}`);
    }
  }

  /**
   * The first route matching the RPC, or why none can be chosen (the server side, gRFC A36,
   * acts on the route itself). May throw on a bug; `decide` guards it.
   */
  match(
    path: string,
    metadata: Metadata,
    random: () => number = Math.random,
  ): { readonly route: Route; readonly label: string } | { readonly message: string } {
    for (const compiled of this.routes) {
      if ('broken' in compiled) {
        return { message: `${compiled.label} can't be evaluated: ${compiled.broken}` };
      }
      if (!matches(compiled, path, metadata, random)) continue;
      return compiled;
    }
    return {
      message: `no route of virtual host ${JSON.stringify(this.virtualHostName)} matches RPC ${JSON.stringify(path)}`,
    };
  }

  private act(route: Route, label: string, random: () => number): RouteDecision {
    const action: RouteAction = route.action;
    switch (action.type) {
      case 'cluster':
        return { kind: 'cluster', cluster: action.cluster, route, timeoutMs: this.timeout(route) };
      case 'weighted_clusters':
        return {
          kind: 'cluster',
          cluster: pickWeighted(action.clusters, random),
          route,
          timeoutMs: this.timeout(route),
        };
      case 'non_forwarding':
        return fail(`${label}: RPCs can't be routed by a non_forwarding action`);
      case 'unsupported':
        return fail(
          action.action === 'unset'
            ? `${label}: the route has no action`
            : `${label}: RPCs can't be routed by a ${action.action} action`,
        );
      default:
        return fail(`${label}: unknown action`);
    }
  }

  /** gRFC A31: the route's max stream duration if it has one (0 = no limit), else the HCM's. */
  private timeout(route: Route): number | undefined {
    const action = route.action;
    const own =
      action.type === 'cluster' || action.type === 'weighted_clusters'
        ? action.maxStreamDurationMs
        : undefined;
    if (own === undefined) return this.hcmTimeoutMs;
    return own > 0 ? own : undefined;
  }
}

function fail(message: string): RouteDecision {
  return { kind: 'fail', message };
}

/** Path, then headers, then the runtime fraction (so `random` is drawn only when it matters). */
function matches(
  compiled: {
    readonly route: Route;
    readonly path: PathTest;
    readonly headers: readonly HeaderTest[];
  },
  path: string,
  metadata: Metadata,
  random: () => number,
): boolean {
  if (!compiled.path(path)) return false;
  for (const header of compiled.headers) if (!header(metadata)) return false;
  const fraction = compiled.route.match.runtimeFractionPerMillion;
  // Considered for `fraction` of a million RPCs: a draw of 0 … 999,999 below it.
  return fraction === undefined || Math.floor(draw(random) * PER_MILLION) < fraction;
}

/** The largest double below 1. */
const BELOW_ONE = 1 - Number.EPSILON / 2;

/** `random()` held to [0, 1): an injected source that strays (NaN, 1, -1) still decides. */
function draw(random: () => number): number {
  const r = random();
  return r > 0 ? Math.min(r, BELOW_ONE) : 0;
}

/**
 * One cluster in proportion to its weight: a draw in [0, total) falls into the cluster whose
 * cumulative weight first exceeds it.
 */
function pickWeighted(
  clusters: readonly { readonly name: string; readonly weight: number }[],
  random: () => number,
): string {
  let total = 0;
  for (const c of clusters) total += c.weight;
  const point = Math.floor(draw(random) * total);
  let cumulative = 0;
  for (const c of clusters) {
    cumulative += c.weight;
    if (point < cumulative) return c.name;
  }
  return clusters[clusters.length - 1]!.name;
}

function compileRoutes(virtualHost: VirtualHost): readonly CompiledRoute[] {
  const vh = JSON.stringify(virtualHost.name);
  return virtualHost.routes.map((route, index): CompiledRoute => {
    const label =
      route.name === undefined
        ? `route at index ${index} of virtual host ${vh}`
        : `route ${JSON.stringify(route.name)} (index ${index}) of virtual host ${vh}`;
    const path = compilePathMatch(route.match.path, route.match.caseSensitive);
    if ('error' in path) return { route, label, broken: path.error };
    const headers: HeaderTest[] = [];
    for (const header of route.match.headers) {
      const test = compileHeaderMatch(header);
      if ('error' in test) return { route, label, broken: test.error };
      headers.push(test);
    }
    return { route, label, path, headers };
  });
}
