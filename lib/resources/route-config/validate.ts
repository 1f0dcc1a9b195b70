// RouteConfiguration proto → RouteConfigUpdate, or every problem found (gRFC A28 and the rules
// gRPC C-core and grpc-go apply; where they differ, see docs/resources/route-config.md).
import type {
  ClusterSpecifierPlugin,
  Route as RouteProto,
  RouteConfiguration,
  VirtualHost as VirtualHostProto,
} from '../../generated/protos';
import type { ValidationErrors } from '../../validation-errors';
import { frozenList } from '../../frozen-list';
import { validateRetryPolicy, validateRouteAction, type ClusterSpecifierPlugins } from './action';
import { extractFilterExtension, validateFilterOverrides } from './filters';
import { validateRouteMatch } from './matchers';
import type { RetryPolicy, Route, RouteAction, RouteConfigUpdate, VirtualHost } from './update';
import { isValidDomainPattern } from './virtual-host-matching';

/**
 * Collects the declared plugin names. No plugin type is implemented here (RLS is out of scope),
 * so a required plugin is an error and an optional one makes the routes that use it skipped, as
 * the RLS-in-xDS design says. Routes naming a plugin already in error are skipped quietly, so
 * one bad plugin gives one error, not one per route (as C-core does).
 */
function validateClusterSpecifierPlugins(
  plugins: readonly ClusterSpecifierPlugin[],
  errors: ValidationErrors,
): ClusterSpecifierPlugins {
  const declared = new Set<string>();
  plugins.forEach((plugin, i) => {
    errors.field('cluster_specifier_plugins', () =>
      errors.index(i, () =>
        errors.field('extension', () => {
          const extension = plugin.extension;
          if (!extension) {
            errors.add('field not present');
            return;
          }
          const name = extension.name;
          if (name === '') errors.addAt('name', 'must be non-empty');
          else if (declared.has(name)) errors.addAt('name', `duplicate name "${name}"`);
          declared.add(name);
          errors.field('typed_config', () => {
            if (!extension.typedConfig) {
              errors.add('field not present');
              return;
            }
            const ext = extractFilterExtension(extension.typedConfig, errors);
            if (!ext) return;
            if (!plugin.isOptional)
              errors.add(`unsupported ClusterSpecifierPlugin type ${ext.typeName}`);
          });
        }),
      ),
    );
  });
  return declared;
}

/** Snake_case names of the Route.action oneof members gRPC does not implement. */
const UNSUPPORTED_ACTIONS = {
  redirect: 'redirect',
  directResponse: 'direct_response',
  filterAction: 'filter_action',
} as const;

/** Validates one route at the current path; undefined when it is skipped (or invalid). */
function validateRoute(
  route: RouteProto,
  virtualHostRetry: RetryPolicy | undefined,
  plugins: ClusterSpecifierPlugins,
  errors: ValidationErrors,
  options: RouteValidationOptions,
): Route | undefined {
  const matchProto = route.match;
  if (!matchProto) {
    errors.addAt('match', 'field not present');
    return undefined;
  }
  // gRPC has no query string: a route that needs one can never match (A28), so it is dropped.
  if (matchProto.queryParameters.length > 0) return undefined;
  const match = errors.field('match', () => validateRouteMatch(matchProto, errors));
  let action: RouteAction | undefined;
  switch (route.action) {
    case 'route':
      action = errors.field('route', () =>
        validateRouteAction(
          route.route!,
          virtualHostRetry,
          plugins,
          errors,
          options.trustedXdsServer,
        ),
      );
      if (!action) return undefined;
      break;
    case 'nonForwardingAction':
      action = Object.freeze({ type: 'non_forwarding' });
      break;
    default:
      action = Object.freeze({
        type: 'unsupported',
        action: route.action ? UNSUPPORTED_ACTIONS[route.action] : 'unset',
      });
  }
  const typedPerFilterConfig = validateFilterOverrides(route.typedPerFilterConfig, errors);
  return Object.freeze({
    ...(route.name === '' ? {} : { name: route.name }),
    match,
    action,
    ...(typedPerFilterConfig ? { typedPerFilterConfig } : {}),
  });
}

function validateVirtualHost(
  vh: VirtualHostProto,
  plugins: ClusterSpecifierPlugins,
  errors: ValidationErrors,
  options: RouteValidationOptions,
): VirtualHost {
  if (vh.domains.length === 0) errors.addAt('domains', 'must be non-empty');
  vh.domains.forEach((domain, i) => {
    if (!isValidDomainPattern(domain)) {
      errors.field('domains', () =>
        errors.index(i, () => errors.add(`unsupported value "${domain}"`)),
      );
    }
  });
  const typedPerFilterConfig = validateFilterOverrides(vh.typedPerFilterConfig, errors);
  const retryPolicy = vh.retryPolicy
    ? errors.field('retry_policy', () => validateRetryPolicy(vh.retryPolicy!, errors))
    : undefined;
  const routes: Route[] = [];
  vh.routes.forEach((route, i) => {
    const r = errors.field('routes', () =>
      errors.index(i, () => validateRoute(route, retryPolicy, plugins, errors, options)),
    );
    if (r) routes.push(r);
  });
  return Object.freeze({
    name: vh.name,
    domains: Object.freeze(vh.domains.slice()),
    routes: frozenList(routes),
    skippedRoutes: vh.routes.length - routes.length,
    ...(retryPolicy === undefined ? {} : { retryPolicy }),
    ...(typedPerFilterConfig ? { typedPerFilterConfig } : {}),
  });
}

/** What route validation needs to know of where the resource came from. */
export interface RouteValidationOptions {
  /** The xDS server has `trusted_xds_server` (gRFC A81): `auto_host_rewrite` is read. */
  readonly trustedXdsServer?: boolean | undefined;
}

/**
 * Validates a RouteConfiguration at the current path of `errors` (the root for RDS, or
 * `api_listener.api_listener.route_config` for one inlined in a Listener). The result is only
 * meaningful when no error was added.
 */
export function validateRouteConfiguration(
  config: RouteConfiguration,
  errors: ValidationErrors,
  options: RouteValidationOptions = {},
): RouteConfigUpdate {
  const plugins = validateClusterSpecifierPlugins(config.clusterSpecifierPlugins, errors);
  const virtualHosts = config.virtualHosts.map((vh, i) =>
    errors.field('virtual_hosts', () =>
      errors.index(i, () => validateVirtualHost(vh, plugins, errors, options)),
    ),
  );
  return Object.freeze({ name: config.name, virtualHosts: Object.freeze(virtualHosts) });
}
