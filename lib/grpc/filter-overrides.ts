// gRFC A39: an HTTP filter's config may be overridden by name in a weighted cluster, a route
// and a virtual host; the most specific level that overrides it wins. The fault injection and
// stateful session filters both read their overrides this way.
import type {
  FilterOverride,
  FilterOverrides,
  Route,
  VirtualHost,
} from '../resources/route-config';

/** The override levels of `route` for an RPC sent to `cluster`, most specific first. */
export function overrideLevels(
  route: Route,
  cluster: string,
  virtualHost: VirtualHost,
): readonly (FilterOverrides | undefined)[] {
  const action = route.action;
  const weighted =
    action.type === 'weighted_clusters'
      ? action.clusters.find((c) => c.name === cluster)?.typedPerFilterConfig
      : undefined;
  return [weighted, route.typedPerFilterConfig, virtualHost.typedPerFilterConfig];
}

/** The first level's override of filter `name` that `read` finds a config of its kind in. */
export function mostSpecificOverride<T>(
  name: string,
  levels: readonly (FilterOverrides | undefined)[],
  read: (override: FilterOverride) => T | undefined,
): T | undefined {
  for (const level of levels) {
    const override = level?.get(name);
    const config = override && read(override);
    if (config) return config;
  }
  return undefined;
}
