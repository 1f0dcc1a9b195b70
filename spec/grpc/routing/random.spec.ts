// Per-RPC random choices (gRFC A28): runtime_fraction and weighted_clusters, rule by rule:
//   1. a route with a fraction or weights;
//   2. decide with an injected `random` set just below and at each boundary;
//   3. expect the exact pick, and exactly the draws the rules need.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Route } from '../../../lib/resources/route-config';
import { clusterOf, decide, match, route, routedTo, scripted } from './helpers';

function weighted(...clusters: [string, number][]): Route {
  return {
    name: 'split',
    match: match(),
    action: {
      type: 'weighted_clusters',
      clusters: clusters.map(([name, weight]) => ({ name, weight })),
      hashPolicies: [],
    },
  };
}

const pick = (routes: Route[], r: number) => clusterOf(decide(routes, { random: () => r }));

describe('RouteTable runtime_fraction', () => {
  const quarter = [route('sampled', match({ runtimeFractionPerMillion: 250_000 }))];

  it('considers the route for n of every million RPCs: draws below n/1e6 match', () => {
    assert.equal(routedTo(quarter, { random: () => 0 }), 'sampled');
    assert.equal(routedTo(quarter, { random: () => 0.249999 }), 'sampled');
    assert.equal(routedTo(quarter, { random: () => 0.25 }), 'fallback');
    assert.equal(routedTo(quarter, { random: () => 0.999999 }), 'fallback');
  });

  it('0 per million never matches; 1,000,000 always does', () => {
    const never = [route('sampled', match({ runtimeFractionPerMillion: 0 }))];
    const always = [route('sampled', match({ runtimeFractionPerMillion: 1_000_000 }))];
    assert.equal(routedTo(never, { random: () => 0 }), 'fallback');
    assert.equal(routedTo(always, { random: () => 0.9999999 }), 'sampled');
  });

  it('draws only once path and headers match, and once per route reached', () => {
    const random = scripted(0.9, 0.1);
    const routes = [
      route(
        'other',
        match({ path: { type: 'prefix', prefix: '/other.' }, runtimeFractionPerMillion: 1 }),
      ),
      route('first', match({ runtimeFractionPerMillion: 500_000 })),
      route('second', match({ runtimeFractionPerMillion: 500_000 })),
    ];
    assert.equal(routedTo(routes, { random }), 'second');
    assert.equal(random.calls, 2);
  });
});

describe('RouteTable weighted_clusters', () => {
  it('picks in proportion to weight: 80/20 splits at a draw of 0.8', () => {
    const split = [weighted(['a', 80], ['b', 20])];
    assert.equal(pick(split, 0), 'a');
    assert.equal(pick(split, 0.7999), 'a');
    assert.equal(pick(split, 0.8), 'b');
    assert.equal(pick(split, 0.9999999), 'b');
  });

  it('each cluster owns its share of [0, 1), in order', () => {
    const split = [weighted(['a', 1], ['b', 1], ['c', 2])];
    assert.deepEqual(
      [0, 0.25, 0.5, 0.75, 0.2499, 0.4999, 0.9999].map((r) => pick(split, r)),
      ['a', 'b', 'c', 'c', 'a', 'b', 'c'],
    );
  });

  it('handles the largest total weight (2^32 − 1) exactly at the boundary', () => {
    const total = 2 ** 32 - 1;
    const split = [weighted(['a', 1], ['b', total - 1])];
    assert.equal(pick(split, 0), 'a');
    assert.equal(pick(split, 1 / total), 'b');
  });

  it('draws once per RPC, and the route decides the whole RPC', () => {
    const random = scripted(0.5);
    const routes = [weighted(['a', 1], ['b', 1])];
    const decision = decide(routes, { random });
    assert.equal(random.calls, 1);
    assert.deepEqual(decision, {
      kind: 'cluster',
      cluster: 'b',
      route: routes[0],
      timeoutMs: undefined,
    });
  });

  it('a fraction and a split on one route draw twice: first the fraction, then the pick', () => {
    const routes: Route[] = [
      { ...weighted(['a', 1], ['b', 1]), match: match({ runtimeFractionPerMillion: 500_000 }) },
    ];
    const random = scripted(0.4, 0.6);
    assert.equal(routedTo(routes, { random }), 'b');
    assert.equal(random.calls, 2);
  });
});
