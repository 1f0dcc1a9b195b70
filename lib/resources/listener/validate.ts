// Listener proto → ListenerUpdate, or every problem found. A client-side Listener is an
// api_listener holding an HttpConnectionManager (gRFC A27, A39, A41, A31); a server-side one has
// an address and filter chains, each holding an HttpConnectionManager (gRFC A36).
import { isIP } from 'node:net';
import { messageCodec, typeNameOfUrl } from '../../codec';
import {
  FilterChainMatch_ConnectionSourceType,
  type CidrRange,
  type FilterChain,
  type FilterChainMatch,
  type HttpConnectionManager,
  type HttpFilter,
  type Listener,
  type Rds,
} from '../../generated/protos';
import { durationMs, isAdsOrSelf, validateCidrRange } from '../common';
import { RBAC_FILTER_TYPE, validateRbacFilterConfig } from '../rbac/validate';
import { FAULT_FILTER_TYPE, validateFaultConfig } from '../route-config/fault';
import {
  HTTP_FILTER_KINDS,
  ROUTER_FILTER_TYPE,
  extractFilterExtension,
  validateRouterConfig,
} from '../route-config/filters';
import { validateRouteConfiguration } from '../route-config/validate';
import type { ProviderNames } from '../common-tls-context';
import { downstreamTls } from './downstream-tls';
import type { ValidationErrors } from '../../validation-errors';
import type {
  CidrRangeConfig,
  FilterChainMatchConfig,
  HttpConnectionManagerConfig,
  HttpFilterConfig,
  ListenerUpdate,
  ServerFilterChain,
  ServerListenerConfig,
} from './update';

const HCM_TYPE =
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const hcmCodec = messageCodec(
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
);

/** Proto names of ConfigSource.config_source_specifier members, for messages. */
const CONFIG_SOURCE_NAMES: Record<string, string> = {
  path: 'path',
  pathConfigSource: 'path_config_source',
  apiConfigSource: 'api_config_source',
};

interface ChainEntry {
  readonly index: number;
  readonly terminal: boolean;
  readonly config: HttpFilterConfig;
}

/** Validates one `http_filters[i]` at its path; undefined when skipped (optional) or invalid. */
function validateHttpFilter(
  filter: HttpFilter,
  errors: ValidationErrors,
  server: boolean,
): HttpFilterConfig | undefined {
  const typedConfig = filter.typedConfig;
  return errors.field('typed_config', () => {
    // config_discovery (ECDS) is not supported: the config must be inline.
    if (!typedConfig) {
      errors.add('field not present');
      return undefined;
    }
    const ext = extractFilterExtension(typedConfig, errors);
    if (!ext) return undefined;
    const kind = HTTP_FILTER_KINDS.get(ext.typeName);
    const usable = kind && (server ? kind.server : kind.client);
    if (!kind || !usable) {
      if (!filter.isOptional) {
        errors.add(
          kind
            ? `filter ${ext.typeName} is not supported on ${server ? 'servers' : 'clients'}`
            : `unsupported filter type ${ext.typeName}`,
        );
      }
      return undefined;
    }
    if (ext.typeName === ROUTER_FILTER_TYPE) validateRouterConfig(ext, errors);
    const fault =
      ext.typeName === FAULT_FILTER_TYPE ? validateFaultConfig(ext.value, errors) : undefined;
    const rbac =
      ext.typeName === RBAC_FILTER_TYPE ? validateRbacFilterConfig(ext.value, errors) : undefined;
    return Object.freeze({
      name: filter.name,
      typeUrl: ext.typeUrl,
      isOptional: filter.isOptional,
      ...(fault ? { fault } : {}),
      ...(rbac ? { rbac } : {}),
    });
  });
}

/**
 * Validates `http_filters` at its path (A39): names non-empty and unique, unknown types allowed
 * only when optional (then skipped), at least one filter left, the router last and only last.
 */
function validateHttpFilters(
  filters: readonly HttpFilter[],
  errors: ValidationErrors,
  server: boolean,
): HttpFilterConfig[] {
  const before = errors.count;
  const chain: ChainEntry[] = [];
  const names = new Set<string>();
  filters.forEach((filter, index) => {
    errors.index(index, () => {
      if (filter.name === '') {
        errors.addAt('name', 'must be non-empty');
        return;
      }
      if (names.has(filter.name)) {
        errors.addAt('name', `duplicate name "${filter.name}"`);
        return;
      }
      names.add(filter.name);
      const config = validateHttpFilter(filter, errors, server);
      if (!config) return;
      const terminal = HTTP_FILTER_KINDS.get(typeNameOfUrl(config.typeUrl))?.terminal ?? false;
      chain.push({ index, terminal, config });
    });
  });
  // An empty chain would have no router: nothing could be sent. Reported only when no filter
  // had an error of its own, which would be the real cause (as C-core does).
  if (chain.length === 0) {
    if (errors.count === before) errors.add('must be non-empty');
    return [];
  }
  chain.forEach((entry, i) => {
    const last = i === chain.length - 1;
    if (entry.terminal && !last) {
      errors.index(entry.index, () => errors.add('router filter must be last'));
    } else if (!entry.terminal && last) {
      errors.index(entry.index, () => errors.add('last filter must be the router'));
    }
  });
  return chain.map((entry) => entry.config);
}

function validateRds(rds: Rds, errors: ValidationErrors): string {
  errors.field('rds', () => {
    const source = rds.configSource;
    if (!source) {
      errors.addAt('config_source', 'field not present');
    } else if (!isAdsOrSelf(source)) {
      const specifier = source.configSourceSpecifier;
      errors.addAt(
        'config_source',
        specifier
          ? `unsupported value ${CONFIG_SOURCE_NAMES[specifier] ?? specifier}: must be ads or self`
          : 'config_source_specifier: field not present',
      );
    }
    // grpc-go's rule (C-core lets an empty name through to a watch that cannot succeed).
    if (rds.routeConfigName === '') errors.addAt('route_config_name', 'must be non-empty');
  });
  return rds.routeConfigName;
}

/** Validates the HttpConnectionManager at the current path (`api_listener.api_listener`). */
function validateHcm(
  hcm: HttpConnectionManager,
  errors: ValidationErrors,
  server = false,
): HttpConnectionManagerConfig {
  // A41: gRPC never trusts X-Forwarded-For; a Listener that asks it to is NACKed.
  if (hcm.xffNumTrustedHops !== 0) errors.addAt('xff_num_trusted_hops', 'must be 0');
  if (hcm.originalIpDetectionExtensions.length > 0) {
    errors.addAt('original_ip_detection_extensions', 'must be empty');
  }
  let routeConfigName: string | undefined;
  let routeConfig: HttpConnectionManagerConfig['routeConfig'];
  switch (hcm.routeSpecifier) {
    case 'rds':
      routeConfigName = validateRds(hcm.rds!, errors);
      break;
    case 'routeConfig':
      routeConfig = errors.field('route_config', () =>
        validateRouteConfiguration(hcm.routeConfig!, errors),
      );
      break;
    case 'scopedRoutes':
      errors.addAt('route_specifier', 'unsupported value scoped_routes');
      break;
    default:
      errors.addAt('route_specifier', 'field not present');
  }
  const maxStreamDuration = hcm.commonHttpProtocolOptions?.maxStreamDuration;
  const maxStreamDurationMs = maxStreamDuration
    ? errors.field('common_http_protocol_options', () =>
        errors.field('max_stream_duration', () => durationMs(maxStreamDuration, errors)),
      )
    : undefined;
  const httpFilters = errors.field('http_filters', () =>
    validateHttpFilters(hcm.httpFilters, errors, server),
  );
  return Object.freeze({
    routeConfigName,
    routeConfig,
    httpFilters: Object.freeze(httpFilters),
    ...(maxStreamDurationMs === undefined ? {} : { maxStreamDurationMs }),
  });
}

const EMPTY_HCM: HttpConnectionManagerConfig = Object.freeze({
  routeConfigName: undefined,
  routeConfig: undefined,
  httpFilters: Object.freeze([]),
});

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Validates a Listener: client-side with an api_listener, else server-side (gRFC A36) when it
 * has an address. The result is only meaningful when no error was added.
 */
export function validateListener(
  listener: Listener,
  errors: ValidationErrors,
  certificateProviders?: ProviderNames,
): ListenerUpdate {
  const apiListener = listener.apiListener;
  if (!apiListener) {
    if (listener.address) {
      const server = validateServerListener(listener, errors, certificateProviders);
      return Object.freeze({ name: listener.name, httpConnectionManager: EMPTY_HCM, server });
    }
    errors.addAt('api_listener', 'field not present');
    return Object.freeze({ name: listener.name, httpConnectionManager: EMPTY_HCM });
  }
  const httpConnectionManager = errors.field('api_listener', () =>
    errors.field('api_listener', () => {
      const any = apiListener.apiListener;
      if (!any) {
        errors.add('field not present');
        return EMPTY_HCM;
      }
      // Compared by type name, as C-core does; a TypedStruct is refused (it is not an HCM).
      if (typeNameOfUrl(any.type_url) !== HCM_TYPE) {
        errors.add(`unsupported value ${any.type_url || '""'}`);
        return EMPTY_HCM;
      }
      let hcm: HttpConnectionManager;
      try {
        hcm = hcmCodec.decode(any.value);
      } catch (e) {
        errors.add(`can't parse HttpConnectionManager: ${errorText(e)}`);
        return EMPTY_HCM;
      }
      return validateHcm(hcm, errors);
    }),
  );
  return Object.freeze({ name: listener.name, httpConnectionManager });
}

// ---- Server side (gRFC A36) ----

const SOURCE_TYPES: Record<number, FilterChainMatchConfig['sourceType']> = {
  [FilterChainMatch_ConnectionSourceType.ANY]: 'any',
  [FilterChainMatch_ConnectionSourceType.SAME_IP_OR_LOOPBACK]: 'same_ip_or_loopback',
  [FilterChainMatch_ConnectionSourceType.EXTERNAL]: 'external',
};

function validateServerListener(
  listener: Listener,
  errors: ValidationErrors,
  providers: ProviderNames,
): ServerListenerConfig {
  const socket = listener.address!.socketAddress;
  let address = '';
  let port = 0;
  errors.field('address', () => {
    if (!socket) {
      errors.addAt('socket_address', 'field not present');
      return;
    }
    errors.field('socket_address', () => {
      address = socket.address;
      if (isIP(address) === 0) errors.addAt('address', `not an IP address: "${address}"`);
      if (socket.portSpecifier !== 'portValue') errors.addAt('port_value', 'field not present');
      else port = socket.portValue!;
    });
  });
  const seen = new Map<string, number>();
  const filterChains: ServerFilterChain[] = [];
  errors.field('filter_chains', () => {
    listener.filterChains.forEach((chain, index) => {
      errors.index(index, () => {
        const before = errors.count;
        const validated = validateFilterChain(chain, errors, providers);
        // An invalid chain's match is incomplete: comparing it would report false overlaps.
        if (!validated || errors.count > before) return;
        // A36: two chains matching exactly the same connections is an error.
        for (const key of matchKeys(validated.match)) {
          const other = seen.get(key);
          if (other !== undefined) {
            errors.addAt('filter_chain_match', `overlaps filter_chains[${other}]`);
            return;
          }
        }
        for (const key of matchKeys(validated.match)) seen.set(key, index);
        filterChains.push(validated);
      });
    });
  });
  const defaultFilterChain = listener.defaultFilterChain
    ? errors.field('default_filter_chain', () =>
        validateFilterChain(listener.defaultFilterChain!, errors, providers, true),
      )
    : undefined;
  return Object.freeze({
    address,
    port,
    filterChains: Object.freeze(filterChains),
    defaultFilterChain,
  });
}

/** Every (destination prefix, source type, source prefix, source port) a match covers. */
function matchKeys(match: FilterChainMatchConfig): string[] {
  const cidr = (r: CidrRangeConfig) => `${r.addressPrefix}/${r.prefixLen}`;
  const dests = match.destinationPrefixes.length ? match.destinationPrefixes.map(cidr) : ['*'];
  const sources = match.sourcePrefixes.length ? match.sourcePrefixes.map(cidr) : ['*'];
  const ports = match.sourcePorts.length ? match.sourcePorts.map(String) : ['*'];
  const keys: string[] = [];
  for (const d of dests) {
    for (const s of sources) for (const p of ports) keys.push(`${d}|${match.sourceType}|${s}|${p}`);
  }
  return keys;
}

/**
 * One chain: its match (undefined when the match uses fields gRPC never matches: A36 drops such
 * a chain) and exactly one network filter, an HttpConnectionManager.
 */
function validateFilterChain(
  chain: FilterChain,
  errors: ValidationErrors,
  providers: ProviderNames,
  isDefault = false,
): ServerFilterChain | undefined {
  const match = chain.filterChainMatch;
  if (!isDefault && match && !isMatchable(match)) return undefined;
  const matchConfig = match
    ? errors.field('filter_chain_match', () => validateMatch(match, errors))
    : EMPTY_MATCH;
  const httpConnectionManager = errors.field('filters', () => {
    if (chain.filters.length !== 1) {
      errors.add('must hold exactly one filter, an HttpConnectionManager');
      return EMPTY_HCM;
    }
    return errors.index(0, () => {
      const filter = chain.filters[0]!;
      const any = filter.typedConfig;
      if (!any) {
        errors.addAt('typed_config', 'field not present');
        return EMPTY_HCM;
      }
      return errors.field('typed_config', () => {
        if (typeNameOfUrl(any.type_url) !== HCM_TYPE) {
          errors.add(`unsupported value ${any.type_url || '""'}`);
          return EMPTY_HCM;
        }
        let hcm: HttpConnectionManager;
        try {
          hcm = hcmCodec.decode(any.value);
        } catch (e) {
          errors.add(`can't parse HttpConnectionManager: ${errorText(e)}`);
          return EMPTY_HCM;
        }
        return validateHcm(hcm, errors, true);
      });
    });
  });
  const socket = chain.transportSocket;
  const security = socket
    ? errors.field('transport_socket', () => downstreamTls(socket, errors, providers))
    : undefined;
  return Object.freeze({
    name: chain.name,
    match: matchConfig,
    httpConnectionManager,
    ...(security ? { security } : {}),
  });
}

/** A36: a chain naming a destination port, server names, ALPN or a non-raw transport never matches. */
function isMatchable(match: FilterChainMatch): boolean {
  return (
    match.destinationPort === null &&
    match.serverNames.length === 0 &&
    (match.transportProtocol === '' || match.transportProtocol === 'raw_buffer') &&
    match.applicationProtocols.length === 0
  );
}

const EMPTY_MATCH: FilterChainMatchConfig = Object.freeze({
  destinationPrefixes: Object.freeze([]),
  sourceType: 'any',
  sourcePrefixes: Object.freeze([]),
  sourcePorts: Object.freeze([]),
});

function validateMatch(match: FilterChainMatch, errors: ValidationErrors): FilterChainMatchConfig {
  const destinationPrefixes = errors.field('prefix_ranges', () =>
    validateRanges(match.prefixRanges, errors),
  );
  const sourcePrefixes = errors.field('source_prefix_ranges', () =>
    validateRanges(match.sourcePrefixRanges, errors),
  );
  const sourceType = SOURCE_TYPES[match.sourceType];
  if (!sourceType) errors.addAt('source_type', `unknown value ${match.sourceType}`);
  return Object.freeze({
    destinationPrefixes,
    sourceType: sourceType ?? 'any',
    sourcePrefixes,
    sourcePorts: Object.freeze([...new Set(match.sourcePorts)]),
  });
}

function validateRanges(ranges: readonly CidrRange[], errors: ValidationErrors): CidrRangeConfig[] {
  const out: CidrRangeConfig[] = [];
  ranges.forEach((range, index) => {
    const valid = errors.index(index, () => validateCidrRange(range, errors, 'full'));
    if (valid) out.push(valid);
  });
  return Object.freeze(out) as CidrRangeConfig[];
}
