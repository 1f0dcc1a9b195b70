// An `xds_servers` list (gRFC A27), top-level or an authority's: each entry's server_uri,
// channel_creds (the first supported one is used), call_creds (A97: call-creds.ts),
// server_features, and the transport's
// api_type with its own fields (REST's refresh_delay, FILESYSTEM's paths).
import { resolve as resolvePath } from 'node:path';
import type { ValidationErrors } from '../validation-errors';
import type { FileWatcherConfig } from './certificates';
import {
  DEFAULT_REFRESH_DELAY_MS,
  PATH_TYPE_ALIASES,
  XDS_API_TYPES,
  type CallCredsConfig,
  type ChannelCredsConfig,
  type ChannelCredsType,
  type XdsApiType,
  type XdsServerConfig,
} from './config';
import {
  FrozenMap,
  asObject,
  durationTextMs,
  frozenJsonObject,
  mustBe,
  optionalArray,
  optionalString,
  own,
  requiredString,
  typeName,
  type JsonObject,
} from './json';
import { callCredsParsers, certificateParsers } from './optional-parsers';

/** An entry without call_creds. */
const NO_CALL_CREDS: readonly CallCredsConfig[] = Object.freeze([]);

/**
 * The channel_creds types we can build. `google_default` is accepted so that bootstraps written
 * for Traffic Director load, but grpc-js has no Google default credentials (they need
 * google-auth-library's ADC): the transport treats it as TLS with the system root certificates
 * and sends no call credentials.
 */
const SUPPORTED_CREDS_TYPES: readonly ChannelCredsType[] = ['insecure', 'tls', 'google_default'];

const EMPTY_CONFIG: Readonly<JsonObject> = Object.freeze({});

/** A JSON array of server entries at the current path; invalid entries are left out. */
export function parseServers(errs: ValidationErrors, value: unknown): readonly XdsServerConfig[] {
  if (!Array.isArray(value)) {
    errs.add(`must be an array (got ${typeName(value)})`);
    return Object.freeze([]);
  }
  const servers: XdsServerConfig[] = [];
  value.forEach((entry: unknown, i) => {
    const server = errs.index(i, () => parseServer(errs, entry));
    if (server !== undefined) servers.push(server);
  });
  return Object.freeze(servers);
}

function parseServer(errs: ValidationErrors, value: unknown): XdsServerConfig | undefined {
  const obj = asObject(errs, value);
  if (obj === undefined) return undefined;
  const apiType = errs.field('api_type', () => parseApiType(errs, own(obj, 'api_type')));
  const grpc = apiType !== 'REST' && apiType !== 'FILESYSTEM';
  const serverUri =
    apiType === 'FILESYSTEM'
      ? (optionalString(errs, obj, 'server_uri') ?? 'filesystem')
      : requiredString(errs, obj, 'server_uri');
  if (serverUri === '') errs.addAt('server_uri', 'must be non-empty');
  else if (apiType === 'REST' && serverUri !== undefined) checkRestUri(errs, serverUri);
  const channelCreds =
    !grpc && own(obj, 'channel_creds') === undefined
      ? INSECURE
      : errs.field('channel_creds', () => parseChannelCredsList(errs, own(obj, 'channel_creds')));
  const callCredsList = own(obj, 'call_creds');
  const callCreds =
    callCredsList === undefined
      ? NO_CALL_CREDS
      : errs.field('call_creds', () => callCredsParsers().parseCallCredsList(errs, callCredsList));
  const serverFeatures = errs.field('server_features', () =>
    parseServerFeatures(errs, own(obj, 'server_features')),
  );
  const refreshDelayMs = errs.field('refresh_delay', () =>
    parseRefreshDelay(errs, own(obj, 'refresh_delay')),
  );
  const paths =
    apiType === 'FILESYSTEM'
      ? errs.field('paths', () => parsePaths(errs, own(obj, 'paths')))
      : undefined;
  if (!serverUri || channelCreds === undefined || apiType === undefined) return undefined;
  if (refreshDelayMs === undefined || (apiType === 'FILESYSTEM' && paths === undefined)) {
    return undefined;
  }
  return Object.freeze({
    serverUri,
    channelCreds,
    serverFeatures,
    ignoreResourceDeletion: serverFeatures.includes('ignore_resource_deletion'),
    failOnDataErrors: serverFeatures.includes('fail_on_data_errors'),
    ...(serverFeatures.includes('trusted_xds_server') && { trustedXdsServer: true as const }),
    resourceTimerIsTransientError: serverFeatures.includes('resource_timer_is_transient_error'),
    ...(callCreds.length > 0 && { callCreds }),
    apiType,
    // Only where they mean something, so a gRPC entry reads as it always did.
    ...(!grpc && { refreshDelayMs }),
    ...(paths && { paths }),
  });
}

const INSECURE: ChannelCredsConfig = Object.freeze({ type: 'insecure', config: EMPTY_CONFIG });

function checkRestUri(errs: ValidationErrors, uri: string): void {
  let url: URL | undefined;
  try {
    url = new URL(uri);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    errs.addAt(
      'server_uri',
      `must be an http:// or https:// URL for api_type REST (got ${JSON.stringify(uri)})`,
    );
  }
}

/** A proto3-JSON Duration string ("1s", "0.25s"), as in Envoy's ApiConfigSource.refresh_delay. */
function parseRefreshDelay(errs: ValidationErrors, value: unknown): number | undefined {
  if (value === undefined) return DEFAULT_REFRESH_DELAY_MS;
  const ms = durationTextMs(value);
  if (ms === undefined) {
    errs.add(
      `must be a duration string such as "1s" or "0.5s" (got ${typeof value === 'string' ? JSON.stringify(value) : typeName(value)})`,
    );
    return undefined;
  }
  if (ms < 1) {
    errs.add(`must be at least 1ms (got ${JSON.stringify(value)})`);
    return undefined;
  }
  return ms;
}

/** `paths`: type (short name or type URL) → a file path, made absolute. */
function parsePaths(
  errs: ValidationErrors,
  value: unknown,
): ReadonlyMap<string, string> | undefined {
  if (value === undefined) {
    errs.add('field not present (api_type FILESYSTEM reads its resources from these files)');
    return undefined;
  }
  const obj = asObject(errs, value);
  if (obj === undefined) return undefined;
  const before = errs.count;
  const paths = new Map<string, string>();
  for (const [key, file] of Object.entries(obj)) {
    const typeUrl = Object.hasOwn(PATH_TYPE_ALIASES, key)
      ? PATH_TYPE_ALIASES[key]!
      : key.startsWith('type.googleapis.com/')
        ? key
        : undefined;
    if (typeUrl === undefined) {
      errs.addAt(
        key,
        `not a resource type: use ${Object.keys(PATH_TYPE_ALIASES).join(', ')} or a type URL`,
      );
    } else if (typeof file !== 'string' || file === '') {
      errs.addAt(key, mustBe('a non-empty file path', file));
    } else if (paths.has(typeUrl)) {
      errs.addAt(key, `a second file for ${typeUrl}`);
    } else {
      paths.set(typeUrl, resolvePath(file));
    }
  }
  if (errs.count > before) return undefined;
  if (paths.size === 0) errs.add('must name at least one file');
  return paths.size === 0 ? undefined : new FrozenMap(paths);
}

function parseApiType(errs: ValidationErrors, value: unknown): XdsApiType | undefined {
  if (value === undefined) return 'AGGREGATED_GRPC';
  if ((XDS_API_TYPES as readonly unknown[]).includes(value)) return value as XdsApiType;
  errs.add(
    `must be one of ${XDS_API_TYPES.join(', ')} (got ${typeof value === 'string' ? JSON.stringify(value) : typeName(value)})`,
  );
  return undefined;
}

/**
 * Every entry is validated, and the first one of a supported type is used; the others are
 * there for clients that support more types (A27).
 */
function parseChannelCredsList(
  errs: ValidationErrors,
  value: unknown,
): ChannelCredsConfig | undefined {
  if (value === undefined) {
    errs.add('field not present');
    return undefined;
  }
  if (!Array.isArray(value)) {
    errs.add(`must be an array (got ${typeName(value)})`);
    return undefined;
  }
  if (value.length === 0) {
    errs.add('must be non-empty');
    return undefined;
  }
  const types: string[] = [];
  let sawSupported = false;
  let selected: ChannelCredsConfig | undefined;
  value.forEach((entry: unknown, i) => {
    const creds = errs.index(i, () => parseChannelCreds(errs, entry));
    if (creds?.type === undefined) return;
    types.push(creds.type);
    if (!isSupportedCredsType(creds.type)) return;
    sawSupported = true;
    if (selected === undefined && creds.config !== undefined) {
      const { type, config, tls } = creds;
      selected = Object.freeze({ type, config, ...(tls && { tls }) });
    }
  });
  // With no readable type at all, the per-entry errors already say what is wrong.
  if (!sawSupported && types.length > 0) {
    errs.add(`no supported type (got ${types.map((t) => JSON.stringify(t)).join(', ')})`);
  }
  return selected;
}

interface ParsedCreds {
  type: string | undefined;
  /** Undefined if invalid. */
  config: Readonly<JsonObject> | undefined;
  /** For `tls`: the files, read once here (the credentials use them as they are). */
  tls?: FileWatcherConfig | undefined;
}

function parseChannelCreds(errs: ValidationErrors, value: unknown): ParsedCreds | undefined {
  const obj = asObject(errs, value);
  if (obj === undefined) return undefined;
  const type = requiredString(errs, obj, 'type');
  return errs.field('config', () => parseCredsConfig(errs, type, own(obj, 'config')));
}

function parseCredsConfig(
  errs: ValidationErrors,
  type: string | undefined,
  value: unknown,
): ParsedCreds {
  if (value === undefined) {
    const tls =
      type === 'tls' ? certificateParsers().parseTlsCredsConfig(errs, EMPTY_CONFIG) : undefined;
    return { type, config: EMPTY_CONFIG, ...(tls && { tls }) };
  }
  const obj = asObject(errs, value);
  if (obj === undefined) return { type, config: undefined };
  // Other types' configs are opaque to us: a newer client may understand them. A `tls`
  // config has the fields of a file_watcher certificate provider, none required (gRFC A65).
  const tls = type === 'tls' ? certificateParsers().parseTlsCredsConfig(errs, obj) : undefined;
  const config = frozenJsonObject(errs, obj);
  return { type, config, ...(tls && { tls }) };
}

function parseServerFeatures(errs: ValidationErrors, value: unknown): readonly string[] {
  const features: string[] = [];
  optionalArray(errs, value).forEach((feature: unknown, i) => {
    if (typeof feature === 'string') features.push(feature);
    else errs.index(i, () => errs.add(mustBe('a string', feature)));
  });
  return Object.freeze(features);
}

function isSupportedCredsType(type: string): type is ChannelCredsType {
  return (SUPPORTED_CREDS_TYPES as readonly string[]).includes(type);
}
