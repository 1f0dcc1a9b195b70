// Readable builders for the routing specs: validated-shape virtual hosts written by hand, the
// call metadata a ConfigSelector sees, and scripted `random` sources.
import assert from 'node:assert/strict';
import { Metadata } from '@grpc/grpc-js';
import type {
  HeaderMatch,
  Route,
  RouteAction,
  RouteMatch,
  VirtualHost,
} from '../../../lib/resources/route-config';
import { RouteTable, type RouteDecision } from '../../../lib/grpc/routing';

/** A RouteMatch: prefix '' (every RPC), case-sensitive, no headers, unless overridden. */
export function match(overrides: Partial<RouteMatch> = {}): RouteMatch {
  return { path: { type: 'prefix', prefix: '' }, caseSensitive: true, headers: [], ...overrides };
}

export function toCluster(cluster: string, maxStreamDurationMs?: number): RouteAction {
  return {
    type: 'cluster',
    cluster,
    hashPolicies: [],
    ...(maxStreamDurationMs === undefined ? {} : { maxStreamDurationMs }),
  };
}

/** A route to `cluster` under `match`; `name` defaults to the cluster's name. */
export function route(cluster: string, m: RouteMatch = match(), name: string = cluster): Route {
  return { name, match: m, action: toCluster(cluster) };
}

/** The same as `route` but only on headers: every path, these header conditions. */
export function headerRoute(cluster: string, ...headers: HeaderMatch[]): Route {
  return route(cluster, match({ headers }));
}

export function virtualHost(routes: Route[], name = 'vh'): VirtualHost {
  return { name, domains: ['*'], routes, skippedRoutes: 0 };
}

/** Call metadata: each entry adds one value (so a repeated key has several, in order). */
export function metadata(...entries: [string, string | Buffer][]): Metadata {
  const md = new Metadata();
  for (const [key, value] of entries) md.add(key, value);
  return md;
}

export const PATH = '/echo.EchoService/Echo';

/** The decision for one RPC on a fresh table of `routes`. */
export function decide(
  routes: Route[],
  opts: { path?: string; md?: Metadata; random?: () => number; hcmMs?: number } = {},
): RouteDecision {
  return RouteTable.for(virtualHost(routes), opts.hcmMs).decide(
    opts.path ?? PATH,
    opts.md ?? new Metadata(),
    opts.random ?? (() => 0),
  );
}

/** The cluster an RPC went to; fails the test if the decision is a failure. */
export function clusterOf(decision: RouteDecision): string {
  assert.equal(decision.kind, 'cluster', JSON.stringify(decision));
  return decision.kind === 'cluster' ? decision.cluster : '';
}

/** The cluster chosen when `routes` end with a catch-all to 'fallback'. */
export function routedTo(routes: Route[], opts: Parameters<typeof decide>[1] = {}): string {
  return clusterOf(decide([...routes, route('fallback')], opts));
}

/** A `random` that answers `values` in order and records how often it was called. */
export function scripted(...values: number[]): (() => number) & { readonly calls: number } {
  let calls = 0;
  const fn = () => {
    const value = values[calls] ?? values[values.length - 1] ?? 0;
    calls++;
    return value;
  };
  return Object.defineProperty(fn, 'calls', { get: () => calls }) as (() => number) & {
    readonly calls: number;
  };
}
