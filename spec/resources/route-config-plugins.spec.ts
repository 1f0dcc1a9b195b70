// RouteConfiguration cluster specifier plugins and per-filter config overrides, rule by rule:
//   1. build a valid RouteConfiguration fixture with the plugins or overrides under test;
//   2. encode and decode it with routeConfigResourceType;
//   3. expect the route kept or skipped, or the exact `path: message` errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RouteConfigUpdate, VirtualHost } from '../../lib/resources/route-config';
import {
  decodeRouteConfig,
  errorsOf,
  FAULT_TYPE,
  rawAny,
  resourceOf,
  route,
  routeConfig,
  TYPE_PREFIX,
  virtualHost,
  withRoute,
  type Obj,
} from './fixtures/route-fixtures';

const R0 = 'virtual_hosts[0].routes[0]';

function errors(object: Obj): string[] {
  return errorsOf(decodeRouteConfig(object));
}

function onlyVirtualHost(object: Obj): VirtualHost {
  return resourceOf(decodeRouteConfig<RouteConfigUpdate>(object)).virtualHosts[0]!;
}

/** The route is skipped: no routes left, one counted. */
function assertSkipped(object: Obj): void {
  const vh = onlyVirtualHost(object);
  assert.deepEqual([vh.routes.length, vh.skippedRoutes], [0, 1]);
}

describe('cluster_specifier_plugins', () => {
  const plugin = (name: string, isOptional: boolean, extra: Obj = {}) => ({
    extension: {
      name,
      typedConfig: rawAny('grpc.lookup.v1.RouteLookupClusterSpecifier'),
      ...extra,
    },
    isOptional,
  });
  const withPlugins = (plugins: Obj[], pluginName = 'rls') =>
    routeConfig({
      clusterSpecifierPlugins: plugins,
      virtualHosts: [
        virtualHost({ routes: [route({ route: { clusterSpecifierPlugin: pluginName } })] }),
      ],
    });

  it('skips routes that use an optional, unsupported plugin', () => {
    assertSkipped(withPlugins([plugin('rls', true)]));
  });

  it('rejects a required plugin: no plugin type is supported', () => {
    assert.deepEqual(errors(withPlugins([plugin('rls', false)])), [
      'cluster_specifier_plugins[0].extension.typed_config: unsupported ClusterSpecifierPlugin type grpc.lookup.v1.RouteLookupClusterSpecifier',
    ]);
  });

  it('rejects a route naming a plugin that is not declared', () => {
    assert.deepEqual(errors(withPlugins([plugin('rls', true)], 'other')), [
      `${R0}.route.cluster_specifier_plugin: unsupported value "other": no such plugin`,
    ]);
  });

  it('rejects duplicate, empty or missing plugin extensions', () => {
    const config = withPlugins([plugin('rls', true), plugin('rls', true), { isOptional: true }]);
    assert.deepEqual(errors(config), [
      'cluster_specifier_plugins[1].extension.name: duplicate name "rls"',
      'cluster_specifier_plugins[2].extension: field not present',
    ]);
  });
});

describe('typed_per_filter_config', () => {
  const faultAny = rawAny(FAULT_TYPE);
  const filterConfig = (config: Obj | undefined, isOptional: boolean) => ({
    '@type': TYPE_PREFIX + 'envoy.config.route.v3.FilterConfig',
    config,
    isOptional,
  });

  it('accepts overrides for a recognised filter, plain or in FilterConfig', () => {
    // An RBACPerRoute without `rbac`: RBAC off for the route (its TypedStruct form is refused,
    // spec/resources/rbac.spec.ts).
    const rbacPerRoute = rawAny('envoy.extensions.filters.http.rbac.v3.RBACPerRoute');
    const config = routeConfig({
      virtualHosts: [
        virtualHost({
          typedPerFilterConfig: { fault: faultAny },
          routes: [
            route({
              typedPerFilterConfig: { fault: filterConfig(faultAny, false), other: rbacPerRoute },
              route: {
                cluster: undefined,
                weightedClusters: {
                  clusters: [
                    { name: 'a', weight: { value: 1 }, typedPerFilterConfig: { fault: faultAny } },
                  ],
                },
              },
            }),
          ],
        }),
      ],
    });
    const vh = onlyVirtualHost(config);
    assert.equal(vh.routes.length, 1);
    const fault = { typeUrl: TYPE_PREFIX + FAULT_TYPE, isOptional: false, fault: {} };
    assert.deepEqual(vh.typedPerFilterConfig, new Map([['fault', fault]]));
    assert.deepEqual(
      vh.routes[0]!.typedPerFilterConfig,
      new Map<string, object>([
        ['fault', fault],
        [
          'other',
          {
            typeUrl: TYPE_PREFIX + 'envoy.extensions.filters.http.rbac.v3.RBACPerRoute',
            isOptional: false,
            rbac: { rules: undefined },
          },
        ],
      ]),
    );
    const action = vh.routes[0]!.action;
    assert.equal(action.type, 'weighted_clusters');
    if (action.type === 'weighted_clusters') {
      assert.deepEqual(action.clusters[0]!.typedPerFilterConfig, new Map([['fault', fault]]));
    }
  });

  it('leaves typedPerFilterConfig out where nothing is kept', () => {
    const vh = onlyVirtualHost(
      withRoute({ typedPerFilterConfig: { x: filterConfig(rawAny('x.Y'), true) } }),
    );
    assert.equal('typedPerFilterConfig' in vh, false);
    assert.equal('typedPerFilterConfig' in vh.routes[0]!, false);
  });

  it('ignores an unknown override marked optional in FilterConfig', () => {
    const vh = onlyVirtualHost(
      withRoute({ typedPerFilterConfig: { x: filterConfig(rawAny('x.Y'), true) } }),
    );
    assert.equal(vh.routes.length, 1);
  });

  it('rejects unknown, router and malformed overrides at each level', () => {
    const config = routeConfig({
      virtualHosts: [
        virtualHost({
          typedPerFilterConfig: { x: rawAny('x.Y') },
          routes: [
            route({
              typedPerFilterConfig: {
                router: rawAny('envoy.extensions.filters.http.router.v3.Router'),
                wrapped: filterConfig(undefined, true),
                strict: filterConfig(rawAny('x.Z'), false),
              },
              route: {
                cluster: undefined,
                weightedClusters: {
                  clusters: [
                    { name: 'a', weight: { value: 1 }, typedPerFilterConfig: { y: rawAny('x.Y') } },
                  ],
                },
              },
            }),
          ],
        }),
      ],
    });
    assert.deepEqual(errors(config), [
      'virtual_hosts[0].typed_per_filter_config[x]: unsupported filter type x.Y',
      `${R0}.route.weighted_clusters.clusters[0].typed_per_filter_config[y]: unsupported filter type x.Y`,
      `${R0}.typed_per_filter_config[router]: router filter does not support config override`,
      `${R0}.typed_per_filter_config[wrapped].config: field not present`,
      `${R0}.typed_per_filter_config[strict].config: unsupported filter type x.Z`,
    ]);
  });
});
