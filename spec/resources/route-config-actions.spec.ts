// RouteConfiguration route actions, rule by rule (gRFC A28 cluster specifiers, A31 max stream
// duration, A44 retry policy, A42 hash policy):
//   1. build a valid RouteConfiguration fixture whose only route carries the action under test;
//   2. encode and decode it with routeConfigResourceType;
//   3. expect the exact action, or the exact `path: message` errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RouteAction, RouteConfigUpdate, VirtualHost } from '../../lib/resources/route-config';
import {
  decodeRouteConfig,
  duration,
  errorsOf,
  rawAny,
  resourceOf,
  route,
  routeConfig,
  virtualHost,
  withAction,
  withRoute,
  type Obj,
} from './fixtures/route-fixtures';

const R0 = 'virtual_hosts[0].routes[0]';
const CLUSTER_A = { type: 'cluster', cluster: 'cluster-a', hashPolicies: [] } as const;
const DEFAULT_RETRY = { retryOn: [], numRetries: 1, baseIntervalMs: 25, maxIntervalMs: 250 };

function errors(object: Obj): string[] {
  return errorsOf(decodeRouteConfig(object));
}

function onlyVirtualHost(object: Obj): VirtualHost {
  return resourceOf(decodeRouteConfig<RouteConfigUpdate>(object)).virtualHosts[0]!;
}

function actionOf(action: Obj): RouteAction {
  const vh = onlyVirtualHost(withAction(action));
  assert.equal(vh.routes.length, 1);
  return vh.routes[0]!.action;
}

/** The route is skipped: no routes left, one counted. */
function assertSkipped(object: Obj): void {
  const vh = onlyVirtualHost(object);
  assert.deepEqual([vh.routes.length, vh.skippedRoutes], [0, 1]);
}

function weighted(clusters: Obj[]): Obj {
  return { cluster: undefined, weightedClusters: { clusters } };
}

function wc(name: string, weight?: number): Obj {
  return weight === undefined ? { name } : { name, weight: { value: weight } };
}

describe('cluster specifier', () => {
  it('reads cluster', () => {
    assert.deepEqual(actionOf({}), CLUSTER_A);
  });

  it('requires a non-empty cluster name', () => {
    assert.deepEqual(errors(withAction({ cluster: '' })), [
      `${R0}.route.cluster: must be non-empty`,
    ]);
  });

  it('reads weighted_clusters, leaving zero-weight entries out', () => {
    assert.deepEqual(actionOf(weighted([wc('a', 30), wc('b', 0), wc('c', 70)])), {
      type: 'weighted_clusters',
      clusters: [
        { name: 'a', weight: 30 },
        { name: 'c', weight: 70 },
      ],
      hashPolicies: [],
    });
  });

  it('requires the weights to sum to more than 0', () => {
    assert.deepEqual(errors(withAction(weighted([wc('a', 0)]))), [
      `${R0}.route.weighted_clusters: sum of weights must be greater than 0`,
    ]);
    assert.deepEqual(errors(withAction(weighted([]))), [
      `${R0}.route.weighted_clusters: sum of weights must be greater than 0`,
    ]);
  });

  it('requires the weights to sum to at most 2^32 - 1', () => {
    assert.equal(actionOf(weighted([wc('a', 0xffff_fffe), wc('b', 1)])).type, 'weighted_clusters');
    assert.deepEqual(errors(withAction(weighted([wc('a', 0xffff_ffff), wc('b', 1)]))), [
      `${R0}.route.weighted_clusters: sum of weights must be in range [1, 4294967295]`,
    ]);
  });

  it('requires each cluster name and weight', () => {
    assert.deepEqual(errors(withAction(weighted([wc('', 1), wc('b')]))), [
      `${R0}.route.weighted_clusters.clusters[0].name: must be non-empty`,
      `${R0}.route.weighted_clusters.clusters[1].weight: field not present`,
    ]);
  });

  for (const [what, action] of [
    ['cluster_header', { cluster: undefined, clusterHeader: 'x-cluster' }],
    ['inline_cluster_specifier_plugin', { cluster: undefined, inlineClusterSpecifierPlugin: {} }],
    ['no cluster specifier', { cluster: undefined }],
  ] as const) {
    it(`skips a route with ${what}`, () => assertSkipped(withAction(action)));
  }
});

describe('route action kinds', () => {
  it('keeps non_forwarding_action routes so that a client fails RPCs matching them', () => {
    const vh = onlyVirtualHost(withRoute({ route: undefined, nonForwardingAction: {} }));
    assert.deepEqual(vh.routes[0]!.action, { type: 'non_forwarding' });
  });

  for (const [field, value, action] of [
    ['redirect', {}, 'redirect'],
    ['directResponse', { status: 503 }, 'direct_response'],
    ['filterAction', { action: rawAny('x.Action') }, 'filter_action'],
  ] as const) {
    it(`keeps a ${action} route as unsupported, so it still captures its RPCs`, () => {
      const vh = onlyVirtualHost(withRoute({ route: undefined, [field]: value }));
      assert.deepEqual(vh.routes[0]!.action, { type: 'unsupported', action });
      assert.equal(vh.skippedRoutes, 0);
    });
  }

  it('keeps a route with no action as unsupported', () => {
    const vh = onlyVirtualHost(withRoute({ route: undefined }));
    assert.deepEqual(vh.routes[0]!.action, { type: 'unsupported', action: 'unset' });
  });
});

describe('max_stream_duration (A31)', () => {
  it('prefers grpc_timeout_header_max over max_stream_duration', () => {
    const action = actionOf({
      maxStreamDuration: {
        maxStreamDuration: duration(5000),
        grpcTimeoutHeaderMax: duration(1500),
      },
    });
    assert.deepEqual(action, { ...CLUSTER_A, maxStreamDurationMs: 1500 });
  });

  it('falls back to max_stream_duration, and keeps an explicit 0 (no limit)', () => {
    assert.deepEqual(actionOf({ maxStreamDuration: { maxStreamDuration: duration(2000) } }), {
      ...CLUSTER_A,
      maxStreamDurationMs: 2000,
    });
    assert.deepEqual(actionOf({ maxStreamDuration: { maxStreamDuration: duration(0) } }), {
      ...CLUSTER_A,
      maxStreamDurationMs: 0,
    });
    assert.deepEqual(actionOf({ maxStreamDuration: {} }), CLUSTER_A);
  });

  it('rejects an out-of-range duration', () => {
    const bad = { maxStreamDuration: { grpcTimeoutHeaderMax: { seconds: 1, nanos: -1 } } };
    assert.deepEqual(errors(withAction(bad)), [
      `${R0}.route.max_stream_duration.grpc_timeout_header_max.nanos: must be in range [0, 999999999]`,
    ]);
  });
});

describe('retry_policy (A44)', () => {
  const retryOf = (retryPolicy: Obj) => {
    const action = actionOf({ retryPolicy });
    assert.equal(action.type, 'cluster');
    return action.type === 'cluster' ? action.retryPolicy : undefined;
  };
  const retryErrors = (retryPolicy: Obj) => errors(withAction({ retryPolicy }));

  it('applies the defaults: 1 retry, 25 ms base, 10 × base max', () => {
    assert.deepEqual(retryOf({}), DEFAULT_RETRY);
    assert.deepEqual(retryOf({ retryBackOff: { baseInterval: duration(100) } }), {
      ...DEFAULT_RETRY,
      baseIntervalMs: 100,
      maxIntervalMs: 1000,
    });
  });

  it('keeps the supported retry_on codes once each, ignoring the rest', () => {
    const policy = retryOf({ retryOn: 'unavailable, 5xx,Cancelled,unavailable,internal' });
    assert.deepEqual(policy?.retryOn, ['unavailable', 'cancelled', 'internal']);
  });

  it('reads num_retries and both intervals', () => {
    const policy = retryOf({
      retryOn: 'deadline-exceeded,resource-exhausted',
      numRetries: { value: 3 },
      retryBackOff: { baseInterval: duration(10), maxInterval: duration(10) },
    });
    assert.deepEqual(policy, {
      retryOn: ['deadline-exceeded', 'resource-exhausted'],
      numRetries: 3,
      baseIntervalMs: 10,
      maxIntervalMs: 10,
    });
  });

  it('requires num_retries >= 1', () => {
    assert.deepEqual(retryErrors({ numRetries: { value: 0 } }), [
      `${R0}.route.retry_policy.num_retries: must be greater than 0`,
    ]);
  });

  it('requires base_interval when retry_back_off is set, and > 0', () => {
    assert.deepEqual(retryErrors({ retryBackOff: {} }), [
      `${R0}.route.retry_policy.retry_back_off.base_interval: field not present`,
    ]);
    assert.deepEqual(retryErrors({ retryBackOff: { baseInterval: duration(0) } }), [
      `${R0}.route.retry_policy.retry_back_off.base_interval: must be greater than 0`,
    ]);
  });

  it('treats intervals under 1 ms as 1 ms', () => {
    const nanos = (n: number) => ({ seconds: 0, nanos: n });
    const policy = retryOf({
      retryBackOff: { baseInterval: nanos(200_000), maxInterval: nanos(500_000) },
    });
    assert.deepEqual(policy, { ...DEFAULT_RETRY, baseIntervalMs: 1, maxIntervalMs: 1 });
    // The default max (10 × base) is taken before the floor: 0.4 ms × 10 = 4 ms.
    const defaulted = retryOf({ retryBackOff: { baseInterval: nanos(400_000) } });
    assert.deepEqual(defaulted, { ...DEFAULT_RETRY, baseIntervalMs: 1, maxIntervalMs: 4 });
  });

  // C-core and grpc-go keep it, and A44 sets no rule: the backoff is capped at the max (issue 20).
  it('keeps a max_interval below base_interval', () => {
    const backOff = { baseInterval: duration(100), maxInterval: duration(99) };
    assert.deepEqual(retryOf({ retryBackOff: backOff }), {
      ...DEFAULT_RETRY,
      baseIntervalMs: 100,
      maxIntervalMs: 99,
    });
  });

  it("inherits the virtual host's policy unless the route has its own", () => {
    const config = routeConfig({
      virtualHosts: [
        virtualHost({
          retryPolicy: { retryOn: 'unavailable', numRetries: { value: 2 } },
          routes: [route(), route({ route: { cluster: 'cluster-a', retryPolicy: {} } })],
        }),
      ],
    });
    const vh = onlyVirtualHost(config);
    const fromVh = { ...DEFAULT_RETRY, retryOn: ['unavailable'], numRetries: 2 };
    assert.deepEqual(vh.retryPolicy, fromVh);
    assert.deepEqual(vh.routes[0]!.action, { ...CLUSTER_A, retryPolicy: fromVh });
    assert.deepEqual(vh.routes[1]!.action, { ...CLUSTER_A, retryPolicy: DEFAULT_RETRY });
  });

  it('validates the virtual host policy at its own path', () => {
    const config = routeConfig({
      virtualHosts: [virtualHost({ retryPolicy: { numRetries: { value: 0 } } })],
    });
    assert.deepEqual(errors(config), [
      'virtual_hosts[0].retry_policy.num_retries: must be greater than 0',
    ]);
  });
});

describe('hash_policy (A42)', () => {
  const hashOf = (hashPolicy: Obj[]) => {
    const action = actionOf({ hashPolicy });
    return action.type === 'cluster' ? action.hashPolicies : undefined;
  };

  it('reads header and channel-id policies and ignores the others', () => {
    assert.deepEqual(
      hashOf([
        { header: { headerName: 'x-user' }, terminal: true },
        {
          header: {
            headerName: 'x-id',
            regexRewrite: { pattern: { regex: 'a+' }, substitution: 'b' },
          },
        },
        { filterState: { key: 'io.grpc.channel_id' } },
        { filterState: { key: 'other' } },
        { connectionProperties: { sourceIp: true } },
      ]),
      [
        { type: 'header', headerName: 'x-user', terminal: true },
        {
          type: 'header',
          headerName: 'x-id',
          regexRewrite: { regex: 'a+', substitution: 'b' },
          terminal: false,
        },
        { type: 'channel_id', terminal: false },
      ],
    );
  });

  it('requires a header name and a valid rewrite pattern', () => {
    const bad = [
      { header: { headerName: '' } },
      { header: { headerName: 'x', regexRewrite: { substitution: 'b' } } },
      { header: { headerName: 'x', regexRewrite: { pattern: { regex: '(?<=a)b' } } } },
    ];
    assert.deepEqual(errors(withAction({ hashPolicy: bad })), [
      `${R0}.route.hash_policy[0].header.header_name: must be non-empty`,
      `${R0}.route.hash_policy[1].header.regex_rewrite.pattern: field not present`,
      `${R0}.route.hash_policy[2].header.regex_rewrite.pattern.regex: invalid regex: invalid named capture: \`(?<=a)b\` (RE2 has no lookaround)`,
    ]);
  });
});
