// The RPC timeout of gRFC A31, row by row:
//   1. a route with or without its own max_stream_duration, under a Listener with or without one;
//   2. decide one RPC;
//   3. expect the decision's timeoutMs (undefined: no limit).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Route } from '../../../lib/resources/route-config';
import { decide, match, toCluster } from './helpers';

function routeWith(maxStreamDurationMs: number | undefined, split = false): Route {
  const settings = maxStreamDurationMs === undefined ? {} : { maxStreamDurationMs };
  return {
    match: match(),
    action: split
      ? {
          type: 'weighted_clusters',
          clusters: [{ name: 'a', weight: 1 }],
          hashPolicies: [],
          ...settings,
        }
      : toCluster('a', maxStreamDurationMs),
  };
}

function timeoutOf(route: Route, hcmMs: number | undefined): number | undefined {
  const decision = decide([route], hcmMs === undefined ? {} : { hcmMs });
  assert.equal(decision.kind, 'cluster');
  return decision.kind === 'cluster' ? decision.timeoutMs : -1;
}

describe('RouteTable timeouts (A31)', () => {
  const rows: [string, number | undefined, number | undefined, number | undefined][] = [
    // [case, route's max_stream_duration, HCM's, expected]
    ["the route's own value wins over the Listener's", 5000, 1000, 5000],
    ["the route's own value, the Listener has none", 1500, undefined, 1500],
    ['a route value of 0 means no limit, even under a Listener limit', 0, 1000, undefined],
    ["a route without one takes the Listener's", undefined, 1000, 1000],
    ['a Listener value of 0 means no limit', undefined, 0, undefined],
    ['neither has one: no limit', undefined, undefined, undefined],
    ['fractions of a millisecond are kept', 2.5, undefined, 2.5],
  ];
  for (const [name, own, hcm, expected] of rows) {
    it(name, () => {
      assert.equal(timeoutOf(routeWith(own), hcm), expected);
    });
  }

  it('weighted_clusters carry the same timeout rules', () => {
    assert.equal(timeoutOf(routeWith(700, true), 1000), 700);
    assert.equal(timeoutOf(routeWith(undefined, true), 1000), 1000);
    assert.equal(timeoutOf(routeWith(0, true), 1000), undefined);
  });
});
