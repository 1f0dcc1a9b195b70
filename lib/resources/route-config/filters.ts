// HTTP filter types this library knows, how a filter's Any is unwrapped, and validation of the
// per-route filter overrides (`typed_per_filter_config`). The Listener validator uses the same
// table for `http_filters`, so the two agree on what a filter type is.
import { messageCodec, TYPE_URL_PREFIX, typeNameOfUrl } from '../../codec';
import type { Any } from '../../generated/protos';
import { type ValidationErrors } from '../../validation-errors';
import { errorReason } from '../../errors';
import { decodeMessage } from '../any';
import { RBAC_FILTER_TYPE, RBAC_PER_ROUTE_TYPE, validateRbacPerRoute } from '../rbac/validate';
import {
  STATEFUL_SESSION_FILTER_TYPE,
  STATEFUL_SESSION_PER_ROUTE_TYPE,
  validateStatefulSessionPerRoute,
} from '../stateful-session/validate';
import { FAULT_FILTER_TYPE, validateFaultConfig } from './fault';
import { GCP_AUTHN_FILTER_TYPE, validateGcpAuthnConfig } from '../gcp-authn/validate';
import type { FilterOverride, FilterOverrides } from './update';

export const ROUTER_FILTER_TYPE = 'envoy.extensions.filters.http.router.v3.Router';
const FILTER_CONFIG_TYPE = 'envoy.config.route.v3.FilterConfig';
const TYPED_STRUCT_TYPES = new Set(['xds.type.v3.TypedStruct', 'udpa.type.v1.TypedStruct']);

export interface HttpFilterKind {
  /** The terminal filter must be last in the chain, and only it may be last. */
  readonly terminal: boolean;
  /** Usable by a gRPC client (RBAC is server-side only, gRFC A41). */
  readonly client: boolean;
  /** Usable by an xDS-enabled server (A36): the router and RBAC (the fault filter is client-only). */
  readonly server: boolean;
  /** The config type it accepts in `typed_per_filter_config`; none: overrides are an error. */
  readonly overrideType?: string;
}

/**
 * Known top-level filter config types: the router; fault injection (A33) and stateful session
 * (A55), whose configs and overrides are parsed for the grpc plugin's channels to apply; RBAC
 * (A41), whose config and overrides are parsed for XdsServer to enforce (on a client it is an
 * error unless optional); and GCP authentication (A83), client-side, whose overrides are
 * validated but never used.
 */
export const HTTP_FILTER_KINDS: ReadonlyMap<string, HttpFilterKind> = new Map<
  string,
  HttpFilterKind
>([
  [ROUTER_FILTER_TYPE, { terminal: true, client: true, server: true }],
  [
    FAULT_FILTER_TYPE,
    { terminal: false, client: true, server: false, overrideType: FAULT_FILTER_TYPE },
  ],
  [
    RBAC_FILTER_TYPE,
    { terminal: false, client: false, server: true, overrideType: RBAC_PER_ROUTE_TYPE },
  ],
  [
    STATEFUL_SESSION_FILTER_TYPE,
    {
      terminal: false,
      client: true,
      server: false,
      overrideType: STATEFUL_SESSION_PER_ROUTE_TYPE,
    },
  ],
  [
    GCP_AUTHN_FILTER_TYPE,
    { terminal: false, client: true, server: false, overrideType: GCP_AUTHN_FILTER_TYPE },
  ],
]);

/** Override config types, to the filter kind that accepts them. */
const OVERRIDE_TYPES = new Map<string, HttpFilterKind>(
  [...HTTP_FILTER_KINDS.values()].flatMap((k) => (k.overrideType ? [[k.overrideType, k]] : [])),
);

/** A filter config Any with any TypedStruct wrapper taken off. */
export interface FilterExtension {
  /** The message type name: `envoy.extensions.filters.http.router.v3.Router`. */
  readonly typeName: string;
  /** Canonical `type.googleapis.com/` URL of `typeName`. */
  readonly typeUrl: string;
  /** Serialized config; undefined when it came as a TypedStruct (a JSON-like Struct). */
  readonly value: Uint8Array | undefined;
}

/**
 * Reads a filter config Any at the current path, unwrapping xds.type.v3 / udpa.type.v1
 * TypedStruct to the type it names (as gRPC does). Undefined, with an error, when unusable.
 */
export function extractFilterExtension(
  any: Any,
  errors: ValidationErrors,
): FilterExtension | undefined {
  const outer = typeNameOfUrl(any.type_url);
  if (outer === '') {
    errors.addAt('type_url', 'must be non-empty');
    return undefined;
  }
  if (!TYPED_STRUCT_TYPES.has(outer)) {
    return { typeName: outer, typeUrl: TYPE_URL_PREFIX + outer, value: any.value };
  }
  let inner: string;
  try {
    const codec = messageCodec(
      outer === 'xds.type.v3.TypedStruct' ? 'xds.type.v3.TypedStruct' : 'udpa.type.v1.TypedStruct',
    );
    inner = typeNameOfUrl(codec.decode(any.value).typeUrl);
  } catch (e) {
    errors.add(`can't parse ${outer}: ${errorReason(e)}`);
    return undefined;
  }
  if (inner === '') {
    errors.addAt('value.type_url', 'must be non-empty');
    return undefined;
  }
  return { typeName: inner, typeUrl: TYPE_URL_PREFIX + inner, value: undefined };
}

/**
 * Checks the router's own config (an empty message). Like C-core and grpc-go, a router given as
 * a TypedStruct is refused: the router's config is never a JSON struct.
 */
export function validateRouterConfig(ext: FilterExtension, errors: ValidationErrors): void {
  if (ext.value === undefined) {
    errors.add(`unsupported value TypedStruct for ${ROUTER_FILTER_TYPE}`);
    return;
  }
  decodeMessage(ROUTER_FILTER_TYPE, ext.value, errors);
}

/** One override at the current path; undefined when it is skipped (optional) or invalid. */
function validateOverride(any: Any, errors: ValidationErrors): FilterOverride | undefined {
  let config: Any | null = any;
  let optional = false;
  if (typeNameOfUrl(any.type_url) === FILTER_CONFIG_TYPE) {
    // FilterConfig wraps the real override and can mark it optional.
    const wrapper = decodeMessage(FILTER_CONFIG_TYPE, any.value, errors);
    if (wrapper === undefined) return undefined;
    config = wrapper.config;
    optional = wrapper.isOptional;
    if (!config) {
      errors.addAt('config', 'field not present');
      return undefined;
    }
  }
  const scoped = <T>(fn: () => T): T => (config === any ? fn() : errors.field('config', fn));
  return scoped((): FilterOverride | undefined => {
    const ext = extractFilterExtension(config, errors);
    if (!ext) return undefined;
    if (ext.typeName === FAULT_FILTER_TYPE) {
      const fault = validateFaultConfig(ext.value, errors);
      if (!fault) return undefined;
      return Object.freeze({ typeUrl: ext.typeUrl, isOptional: optional, fault });
    }
    if (ext.typeName === RBAC_PER_ROUTE_TYPE) {
      const rbac = validateRbacPerRoute(ext.value, errors);
      if (!rbac) return undefined;
      return Object.freeze({ typeUrl: ext.typeUrl, isOptional: optional, rbac });
    }
    if (ext.typeName === STATEFUL_SESSION_PER_ROUTE_TYPE) {
      const statefulSession = validateStatefulSessionPerRoute(ext.value, errors);
      if (!statefulSession) return undefined;
      return Object.freeze({ typeUrl: ext.typeUrl, isOptional: optional, statefulSession });
    }
    // A83: the filter's config is validated where it overrides, but only the Listener's counts.
    if (ext.typeName === GCP_AUTHN_FILTER_TYPE && !validateGcpAuthnConfig(ext.value, errors)) {
      return undefined;
    }
    if (OVERRIDE_TYPES.has(ext.typeName)) {
      return Object.freeze({ typeUrl: ext.typeUrl, isOptional: optional });
    }
    if (ext.typeName === ROUTER_FILTER_TYPE) {
      errors.add('router filter does not support config override');
    } else if (!optional) {
      errors.add(`unsupported filter type ${ext.typeName}`);
    }
    return undefined;
  });
}

/**
 * Validates a `typed_per_filter_config` map (of a virtual host, route or weighted cluster) at
 * the current path. Entries are scoped as `typed_per_filter_config[<filter name>]`. Returns the
 * kept overrides by filter name, or undefined when none is kept.
 */
export function validateFilterOverrides(
  overrides: { readonly [name: string]: Any },
  errors: ValidationErrors,
): FilterOverrides | undefined {
  let kept: Map<string, FilterOverride> | undefined;
  for (const [name, any] of Object.entries(overrides)) {
    const override = errors.field(`typed_per_filter_config[${name}]`, () => {
      if (name === '') errors.add('filter name must be non-empty');
      return validateOverride(any, errors);
    });
    if (override) (kept ??= new Map()).set(name, override);
  }
  return kept;
}
