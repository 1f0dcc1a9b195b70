// The short names a test may use for the four xDS resource types, and their type URLs.
import { TYPE_URL_PREFIX } from '../codec';

export type ResourceTypeAlias =
  'listener' | 'route' | 'cluster' | 'endpoint' | 'lds' | 'rds' | 'cds' | 'eds';

/** An alias, or a full type URL (`type.googleapis.com/<message>`, for custom resource types). */
export type ResourceTypeName = ResourceTypeAlias | (string & {});

export const LISTENER_TYPE_URL = `${TYPE_URL_PREFIX}envoy.config.listener.v3.Listener`;
export const ROUTE_TYPE_URL = `${TYPE_URL_PREFIX}envoy.config.route.v3.RouteConfiguration`;
export const CLUSTER_TYPE_URL = `${TYPE_URL_PREFIX}envoy.config.cluster.v3.Cluster`;
export const ENDPOINT_TYPE_URL = `${TYPE_URL_PREFIX}envoy.config.endpoint.v3.ClusterLoadAssignment`;

const BY_ALIAS: Readonly<Record<ResourceTypeAlias, string>> = {
  listener: LISTENER_TYPE_URL,
  lds: LISTENER_TYPE_URL,
  route: ROUTE_TYPE_URL,
  rds: ROUTE_TYPE_URL,
  cluster: CLUSTER_TYPE_URL,
  cds: CLUSTER_TYPE_URL,
  endpoint: ENDPOINT_TYPE_URL,
  eds: ENDPOINT_TYPE_URL,
};

/** The types every server serves from the start (empty until set), as a real control plane. */
export const STANDARD_TYPE_URLS: readonly string[] = [
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
];

const SHORT_NAMES = new Map<string, string>([
  [LISTENER_TYPE_URL, 'listener'],
  [ROUTE_TYPE_URL, 'route'],
  [CLUSTER_TYPE_URL, 'cluster'],
  [ENDPOINT_TYPE_URL, 'endpoint'],
]);

/** Alias or URL -> type URL. Throws for anything else, so a typo fails the test at once. */
export function resolveTypeUrl(type: ResourceTypeName): string {
  const byAlias = (BY_ALIAS as Readonly<Record<string, string>>)[type];
  if (byAlias !== undefined) return byAlias;
  if (type.includes('/')) return type;
  throw new Error(
    `unknown resource type "${type}": use listener, route, cluster, endpoint ` +
      '(or lds, rds, cds, eds) or a full type URL',
  );
}

/** `cluster` for the Cluster URL, the URL itself for others: for messages and error paths. */
export function shortTypeName(typeUrl: string): string {
  return SHORT_NAMES.get(typeUrl) ?? typeUrl;
}
