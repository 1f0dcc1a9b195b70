// Route actions and failures (gRFC A28, A31), rule by rule:
//   1. a virtual host whose matching route has the action under test;
//   2. decide one RPC;
//   3. expect the exact decision: the cluster and route, or the exact failure message.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ClusterAction, Route, RouteAction } from '../../../lib/resources/route-config';
import { decide, match, PATH, route } from './helpers';

function withAction(action: RouteAction, name?: string): Route {
  return { ...(name === undefined ? {} : { name }), match: match(), action };
}

describe('RouteTable actions', () => {
  it('cluster: the RPC goes to that cluster, with the route that matched', () => {
    const routes = [route('echo-a')];
    assert.deepEqual(decide(routes), {
      kind: 'cluster',
      cluster: 'echo-a',
      route: routes[0],
      timeoutMs: undefined,
    });
  });

  it('non_forwarding fails the RPC, naming the route and the virtual host', () => {
    const routes = [
      route('a', match({ path: { type: 'path', path: '/x.Y/Z' } })),
      route('b', match({ path: { type: 'path', path: '/x.Y/W' } })),
      withAction({ type: 'non_forwarding' }, 'name'),
    ];
    assert.deepEqual(decide(routes), {
      kind: 'fail',
      message: `route "name" (index 2) of virtual host "vh": RPCs can't be routed by a non_forwarding action`,
    });
  });

  it('redirect, direct_response and filter_action fail the RPC, saying which', () => {
    for (const action of ['redirect', 'direct_response', 'filter_action'] as const) {
      assert.deepEqual(decide([withAction({ type: 'unsupported', action }, 'r')]), {
        kind: 'fail',
        message: `route "r" (index 0) of virtual host "vh": RPCs can't be routed by a ${action} action`,
      });
    }
  });

  it('a route with no action fails the RPC; an unnamed route is named by its index', () => {
    assert.deepEqual(decide([withAction({ type: 'unsupported', action: 'unset' })]), {
      kind: 'fail',
      message: `route at index 0 of virtual host "vh": the route has no action`,
    });
  });

  it('a failing route is not skipped: RPCs it matches do not fall through to a later route', () => {
    const decision = decide([withAction({ type: 'non_forwarding' }), route('later')]);
    assert.equal(decision.kind, 'fail');
  });

  it('no route matching fails the RPC, naming the path and the virtual host', () => {
    const routes = [route('a', match({ path: { type: 'prefix', prefix: '/other.' } }))];
    assert.deepEqual(decide(routes), {
      kind: 'fail',
      message: `no route of virtual host "vh" matches RPC "${PATH}"`,
    });
    assert.deepEqual(decide([]), {
      kind: 'fail',
      message: `no route of virtual host "vh" matches RPC "${PATH}"`,
    });
  });

  it('the forwarding settings travel with the route (retry and hash policies for the caller)', () => {
    const action: ClusterAction = {
      type: 'cluster',
      cluster: 'a',
      hashPolicies: [],
      retryPolicy: {
        retryOn: ['unavailable'],
        numRetries: 2,
        baseIntervalMs: 25,
        maxIntervalMs: 250,
      },
    };
    const decision = decide([withAction(action, 'r')]);
    assert.equal(decision.kind === 'cluster' && decision.route.action, action);
  });
});
