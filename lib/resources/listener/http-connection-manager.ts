// The HttpConnectionManager a Listener carries: the client's in its api_listener (gRFC A27,
// A39, A41, A31), each server filter chain's as its one network filter (gRFC A36). Decoded from
// its Any here, once, and validated the same way on both sides but for the filters each side
// runs.
import { typeNameOfUrl } from '../../codec';
import type { Any, HttpConnectionManager, HttpFilter, Rds } from '../../generated/protos';
import type { ValidationErrors } from '../../validation-errors';
import { decodeMessage } from '../any';
import { durationMs, isAdsOrSelf } from '../common';
import { RBAC_FILTER_TYPE, validateRbacFilterConfig } from '../rbac/validate';
import { GCP_AUTHN_FILTER_TYPE, validateGcpAuthnConfig } from '../gcp-authn/validate';
import { FAULT_FILTER_TYPE, validateFaultConfig } from '../route-config/fault';
import {
  STATEFUL_SESSION_FILTER_TYPE,
  validateStatefulSessionFilter,
} from '../stateful-session/validate';
import {
  HTTP_FILTER_KINDS,
  ROUTER_FILTER_TYPE,
  extractFilterExtension,
  validateRouterConfig,
} from '../route-config/filters';
import { validateRouteConfiguration, type RouteValidationOptions } from '../route-config/validate';
import type { HttpConnectionManagerConfig, HttpFilterConfig } from './update';

const HCM_TYPE =
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';

/** What a Listener without a usable HttpConnectionManager reports (with its errors). */
export const EMPTY_HCM: HttpConnectionManagerConfig = Object.freeze({
  routeConfigName: undefined,
  routeConfig: undefined,
  httpFilters: Object.freeze([]),
});

/**
 * The HttpConnectionManager in `any`, at the current path (the Any's own): its type, its bytes
 * and its contents. `side` chooses which filters are allowed. EMPTY_HCM after an error that
 * leaves nothing to read.
 */
export function validateHcmAny(
  any: Any,
  errors: ValidationErrors,
  side: 'client' | 'server',
  routeOptions: RouteValidationOptions = {},
): HttpConnectionManagerConfig {
  // Compared by type name, as C-core does; a TypedStruct is refused (it is not an HCM).
  if (typeNameOfUrl(any.type_url) !== HCM_TYPE) {
    errors.add(`unsupported value ${any.type_url || '""'}`);
    return EMPTY_HCM;
  }
  const hcm = decodeMessage(HCM_TYPE, any.value, errors);
  return hcm ? validateHcm(hcm, errors, side === 'server', routeOptions) : EMPTY_HCM;
}

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
    const statefulSession =
      ext.typeName === STATEFUL_SESSION_FILTER_TYPE
        ? validateStatefulSessionFilter(ext.value, errors)
        : undefined;
    const gcpAuthn =
      ext.typeName === GCP_AUTHN_FILTER_TYPE
        ? validateGcpAuthnConfig(ext.value, errors)
        : undefined;
    return Object.freeze({
      name: filter.name,
      typeUrl: ext.typeUrl,
      isOptional: filter.isOptional,
      ...(fault ? { fault } : {}),
      ...(rbac ? { rbac } : {}),
      ...(statefulSession ? { statefulSession } : {}),
      ...(gcpAuthn ? { gcpAuthn } : {}),
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

/** Validates a decoded HttpConnectionManager at the current path. */
function validateHcm(
  hcm: HttpConnectionManager,
  errors: ValidationErrors,
  server: boolean,
  routeOptions: RouteValidationOptions,
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
        validateRouteConfiguration(hcm.routeConfig!, errors, routeOptions),
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
