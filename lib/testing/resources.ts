// Small builders for the resources most tests need, as plain proto3 JSON (snake_case) to pass
// to setResources. They return fresh objects: change a field to make a variant, e.g.
// `{ ...edsCluster('A'), lb_policy: 'RING_HASH' }`.
import { TYPE_URL_PREFIX } from '../codec';
import {
  downstreamTlsTransportSocket,
  upstreamTlsTransportSocket,
  type DownstreamTlsOptions,
  type UpstreamTlsOptions,
} from './tls-resources';

/** Proto3 JSON of one message. */
export type JsonObject = { [key: string]: unknown };

const HCM_TYPE_URL = `${TYPE_URL_PREFIX}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`;
const ROUTER_TYPE_URL = `${TYPE_URL_PREFIX}envoy.extensions.filters.http.router.v3.Router`;
const AGGREGATE_TYPE_URL = `${TYPE_URL_PREFIX}envoy.extensions.clusters.aggregate.v3.ClusterConfig`;
const RBAC_TYPE_URL = `${TYPE_URL_PREFIX}envoy.extensions.filters.http.rbac.v3.RBAC`;
const RBAC_PER_ROUTE_TYPE_URL = `${TYPE_URL_PREFIX}envoy.extensions.filters.http.rbac.v3.RBACPerRoute`;

/** "Fetch it over the same ADS stream": what gRPC clients require of RDS and EDS configs. */
function adsConfigSource(): JsonObject {
  return { ads: {}, resource_api_version: 'V3' };
}

/**
 * A client-side Listener: an api_listener whose HttpConnectionManager takes its routes from
 * RDS (`routeConfigName`, over ADS) and ends its filter chain with the router.
 */
export function listener(name: string, routeConfigName: string): JsonObject {
  return {
    name,
    api_listener: {
      api_listener: {
        '@type': HCM_TYPE_URL,
        rds: { route_config_name: routeConfigName, config_source: adsConfigSource() },
        http_filters: [{ name: 'router', typed_config: { '@type': ROUTER_TYPE_URL } }],
      },
    },
  };
}

export interface ServerListenerOptions {
  /** RDS: the RouteConfiguration to fetch (over ADS). Default: inline routes. */
  routeConfigName?: string;
  /**
   * Inline routes (proto3 JSON Route objects) of one virtual host for every domain; default one
   * route serving every RPC (`non_forwarding_action`). Ignored with `routeConfigName`.
   */
  routes?: readonly JsonObject[];
  /** Fields merged into the inline routes' one virtual host (e.g. `typed_per_filter_config`). */
  virtualHost?: JsonObject;
  /** HTTP filters run before the router, in order (e.g. `rbacFilter(…)`). Default none. */
  httpFilters?: readonly JsonObject[];
  /** Fields merged into the one filter chain (e.g. `filter_chain_match`). */
  filterChain?: JsonObject;
  /** The chain's DownstreamTlsContext (gRFC A29). Default: none (the fallback credentials). */
  tls?: DownstreamTlsOptions;
}

/**
 * A server-side Listener (gRFC A36) for `ip:port`: the address and one filter chain whose
 * HttpConnectionManager ends with the router. `name` is the bootstrap's
 * `server_listener_resource_name_template` with `%s` replaced by `ip:port`.
 */
export function serverListener(
  name: string,
  ip: string,
  port: number,
  options: ServerListenerOptions = {},
): JsonObject {
  const routes = options.routes ?? [{ match: { prefix: '' }, non_forwarding_action: {} }];
  const routeSpecifier =
    options.routeConfigName === undefined
      ? {
          route_config: {
            name: `${name}-routes`,
            virtual_hosts: [
              { name: 'server', domains: ['*'], routes: [...routes], ...options.virtualHost },
            ],
          },
        }
      : { rds: { route_config_name: options.routeConfigName, config_source: adsConfigSource() } };
  return {
    name,
    address: { socket_address: { address: ip, port_value: port } },
    filter_chains: [
      {
        filters: [
          {
            name: 'hcm',
            typed_config: {
              '@type': HCM_TYPE_URL,
              ...routeSpecifier,
              http_filters: [
                ...(options.httpFilters ?? []),
                { name: 'router', typed_config: { '@type': ROUTER_TYPE_URL } },
              ],
            },
          },
        ],
        ...(options.tls ? { transport_socket: downstreamTlsTransportSocket(options.tls) } : {}),
        ...options.filterChain,
      },
    ],
  };
}

/**
 * An RBAC HTTP filter (gRFC A41) for `ServerListenerOptions.httpFilters`. `rules` is an
 * `envoy.config.rbac.v3.RBAC` in proto3 JSON (`{ action: 'DENY', policies: { … } }`); without
 * it the filter enforces nothing.
 */
export function rbacFilter(name: string, rules?: JsonObject): JsonObject {
  return { name, typed_config: { '@type': RBAC_TYPE_URL, ...(rules ? { rules } : {}) } };
}

/**
 * An RBACPerRoute override for a route's or virtual host's `typed_per_filter_config`, keyed by
 * the RBAC filter's name: `rules` replace the filter's there; without them RBAC is off there.
 */
export function rbacPerRoute(rules?: JsonObject): JsonObject {
  return { '@type': RBAC_PER_ROUTE_TYPE_URL, ...(rules ? { rbac: { rules } } : {}) };
}

export interface RouteConfigOptions {
  /** Default ['*']. */
  domains?: readonly string[];
  /** Every request (prefix '') goes to this cluster. */
  cluster: string;
}

/** One virtual host whose one route sends everything to `cluster`. */
export function routeConfig(name: string, options: RouteConfigOptions): JsonObject {
  return {
    name,
    virtual_hosts: [
      {
        name: `${name}-vhost`,
        domains: [...(options.domains ?? ['*'])],
        routes: [{ match: { prefix: '' }, route: { cluster: options.cluster } }],
      },
    ],
  };
}

export interface EdsClusterOptions {
  /** The EDS resource name, when it is not the cluster's name. */
  serviceName?: string;
  /** `lrs_server: { self: {} }`: clients report the cluster's load to this server (LRS). */
  loadReporting?: boolean;
  /** The cluster's UpstreamTlsContext (gRFC A29). Default: none (the fallback credentials). */
  tls?: UpstreamTlsOptions;
}

/** An EDS cluster, round robin, endpoints over ADS. */
export function edsCluster(name: string, options: EdsClusterOptions = {}): JsonObject {
  const edsConfig: JsonObject = { eds_config: adsConfigSource() };
  if (options.serviceName !== undefined) edsConfig['service_name'] = options.serviceName;
  const cluster: JsonObject = {
    name,
    type: 'EDS',
    eds_cluster_config: edsConfig,
    lb_policy: 'ROUND_ROBIN',
  };
  if (options.loadReporting) cluster['lrs_server'] = { self: {} };
  if (options.tls) cluster['transport_socket'] = upstreamTlsTransportSocket(options.tls);
  return cluster;
}

/** A LOGICAL_DNS cluster (gRFC A37): one locality, one endpoint, `host:port` resolved by DNS. */
export function logicalDnsCluster(name: string, host: string, port: number): JsonObject {
  return {
    name,
    type: 'LOGICAL_DNS',
    lb_policy: 'ROUND_ROBIN',
    load_assignment: {
      cluster_name: name,
      endpoints: [{ lb_endpoints: [lbEndpoint(host, port)] }],
    },
  };
}

/** An aggregate cluster (gRFC A37) over `children`, in priority order. */
export function aggregateCluster(name: string, children: readonly string[]): JsonObject {
  return {
    name,
    cluster_type: {
      name: 'envoy.clusters.aggregate',
      typed_config: { '@type': AGGREGATE_TYPE_URL, clusters: [...children] },
    },
    lb_policy: 'ROUND_ROBIN',
  };
}

/**
 * One locality of `endpoints()`, described loosely for tests (not the validated
 * `LocalityEndpoints` of an EndpointUpdate, which it becomes once the client has it).
 */
export interface EndpointsLocalityInput {
  /** Default 0 (the highest). */
  priority?: number;
  /** Default: the empty locality. */
  locality?: { region?: string; zone?: string; subZone?: string };
  /** Default 1: gRPC clients ignore localities without a weight. */
  weight?: number;
  /** 'host:port' or '[v6]:port'. */
  addresses: readonly string[];
}

/** A ClusterLoadAssignment: one entry per locality. */
export function endpoints(
  clusterName: string,
  localities: readonly EndpointsLocalityInput[],
): JsonObject {
  return {
    cluster_name: clusterName,
    endpoints: localities.map((entry) => {
      // gRPC clients reject a locality entry without `locality` (C-core: "field not present").
      const { region = '', zone = '', subZone = '' } = entry.locality ?? {};
      return {
        locality: { region, zone, sub_zone: subZone },
        load_balancing_weight: entry.weight ?? 1,
        priority: entry.priority ?? 0,
        lb_endpoints: entry.addresses.map((address) => {
          const { host, port } = splitHostPort(address);
          return lbEndpoint(host, port);
        }),
      };
    }),
  };
}

function lbEndpoint(host: string, port: number): JsonObject {
  return { endpoint: { address: { socket_address: { address: host, port_value: port } } } };
}

function splitHostPort(address: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(address);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) {
    throw new Error(`endpoints: address must be "host:port" or "[v6]:port", got "${address}"`);
  }
  return { host: match[1] ?? match[2] ?? '', port };
}
