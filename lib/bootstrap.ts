// The gRPC xDS bootstrap (gRFC A27, A47): where the management servers are and who we are.
// The behavioural reference is gRPC C-core (xds_bootstrap_grpc.cc) and grpc-go
// (internal/xds/bootstrap): unknown fields are ignored, every problem is collected and reported
// at once under its JSON field path.

import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { status } from '@grpc/grpc-js';
import {
  parseCertificateProviders,
  parseTlsCredsConfig,
  type CertificateProviderConfig,
} from './bootstrap-certificates';
import { XdsError, formatFieldErrors, type FieldError, type XdsErrorOptions } from './errors';
import { ValidationErrors } from './validation-errors';

/** A channel credential this library can use to reach an xDS server. */
export type ChannelCredsType = 'insecure' | 'tls' | 'google_default';

export interface ChannelCredsConfig {
  readonly type: ChannelCredsType;
  /** The `config` object of the bootstrap entry (for `tls`: ca_certificate_file etc.). */
  readonly config: Readonly<Record<string, unknown>>;
}

export interface XdsServerConfig {
  /**
   * gRPC transports: `host:port` or any grpc-js target (`dns:///host:port`, `unix:/path`).
   * REST: an `http://` or `https://` URL. FILESYSTEM: optional, a name for the files in events
   * and errors (default `filesystem`).
   */
  readonly serverUri: string;
  /**
   * The first entry of `channel_creds` whose type is supported. Optional for REST (https uses a
   * `tls` entry's files, else the system roots) and FILESYSTEM: then `insecure`.
   */
  readonly channelCreds: ChannelCredsConfig;
  readonly serverFeatures: readonly string[];
  /** `ignore_resource_deletion` is in server_features (gRFC A53). */
  readonly ignoreResourceDeletion: boolean;
  /** `fail_on_data_errors` is in server_features (gRFC A88). */
  readonly failOnDataErrors: boolean;
  /** `api_type`: the transport (docs/transports.md); default SotW ADS. */
  readonly apiType: XdsApiType;
  /**
   * `refresh_delay` in ms (a proto3-JSON duration, default "1s"): REST's poll period, and
   * FILESYSTEM's poll for changes a file system watch may miss. Unused by gRPC transports.
   */
  readonly refreshDelayMs?: number | undefined;
  /** FILESYSTEM: `paths`, by type URL: the file holding that type's DiscoveryResponse. */
  readonly paths?: ReadonlyMap<string, string> | undefined;
}

/** The `api_type`s of a server entry the client speaks (Envoy's ApiConfigSource.ApiType). */
export const XDS_API_TYPES = [
  'AGGREGATED_GRPC',
  'AGGREGATED_DELTA_GRPC',
  'GRPC',
  'DELTA_GRPC',
  'REST',
  'FILESYSTEM',
] as const;
export type XdsApiType = (typeof XDS_API_TYPES)[number];

/** The short names `paths` accepts for the four xDS types, and their type URLs. */
export const PATH_TYPE_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  listener: 'type.googleapis.com/envoy.config.listener.v3.Listener',
  route: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
  cluster: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  endpoint: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
});

/** `refresh_delay` when the entry has none. */
export const DEFAULT_REFRESH_DELAY_MS = 1000;

export interface LocalityConfig {
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
}

export interface NodeConfig {
  readonly id: string;
  readonly cluster: string;
  readonly locality: LocalityConfig | undefined;
  /** google.protobuf.Struct as plain JSON. */
  readonly metadata: Readonly<Record<string, unknown>> | undefined;
}

export interface AuthorityConfig {
  readonly name: string;
  /** Empty means: use the top-level xds_servers. */
  readonly xdsServers: readonly XdsServerConfig[];
  /** Default `xdstp://<authority>/envoy.config.listener.v3.Listener/%s`. */
  readonly clientListenerResourceNameTemplate: string;
}

export interface Bootstrap {
  readonly xdsServers: readonly XdsServerConfig[];
  readonly node: NodeConfig;
  readonly authorities: ReadonlyMap<string, AuthorityConfig>;
  /** Default `%s`. */
  readonly clientDefaultListenerResourceNameTemplate: string;
  readonly serverListenerResourceNameTemplate: string | undefined;
  /** gRFC A29: certificate provider instances by name (empty when the field is absent). */
  readonly certificateProviders: ReadonlyMap<string, CertificateProviderConfig>;
}

/** A stable identity for a server config: equal keys share one ADS stream. */
export function serverKey(server: XdsServerConfig): string {
  // Called on every watch(); configs are frozen, so the key of each object is computed once.
  let key = serverKeys.get(server);
  if (key === undefined) {
    key = JSON.stringify([
      server.serverUri,
      server.channelCreds,
      server.serverFeatures,
      server.apiType,
      server.refreshDelayMs ?? DEFAULT_REFRESH_DELAY_MS,
      server.paths ? [...server.paths] : null,
    ]);
    serverKeys.set(server, key);
  }
  return key;
}

const serverKeys = new WeakMap<XdsServerConfig, string>();

/** Where `loadBootstrap()` looks when it is given no input. */
export interface BootstrapSources {
  /** Default `process.env`, read at call time (never at module load). */
  env?: NodeJS.ProcessEnv;
}

/** A file path; takes precedence over the inline config (gRFC A27). */
const BOOTSTRAP_FILE_ENV = 'GRPC_XDS_BOOTSTRAP';
/** The bootstrap JSON itself (grpc-node#1868). */
const BOOTSTRAP_CONFIG_ENV = 'GRPC_XDS_BOOTSTRAP_CONFIG';
const ERROR_PREFIX = 'invalid xDS bootstrap: ';
const DEFAULT_CLIENT_LISTENER_TEMPLATE = '%s';

/**
 * The channel_creds types we can build. `google_default` is accepted so that bootstraps written
 * for Traffic Director load, but grpc-js has no Google default credentials (they need
 * google-auth-library's ADC): the transport treats it as TLS with the system root certificates
 * and sends no call credentials.
 */
const SUPPORTED_CREDS_TYPES: readonly ChannelCredsType[] = ['insecure', 'tls', 'google_default'];

type JsonObject = Record<string, unknown>;

const EMPTY_CONFIG: Readonly<JsonObject> = Object.freeze({});
const EMPTY_NODE: NodeConfig = Object.freeze({
  id: '',
  cluster: '',
  locality: undefined,
  metadata: undefined,
});

/**
 * Loads and validates a bootstrap: from an object, a JSON string, or (undefined) the env vars.
 * Throws XdsError(INVALID_ARGUMENT) naming the field. The result is deeply frozen: one
 * bootstrap is shared by every client and channel built from it.
 */
export function loadBootstrap(input?: object | string, sources: BootstrapSources = {}): Bootstrap {
  let raw: unknown;
  if (input === undefined) raw = readFromEnv(sources.env ?? process.env);
  else if (typeof input === 'string') raw = parseJson(input, 'bootstrap JSON string');
  else raw = input;
  const errs = new ValidationErrors();
  const bootstrap = parseBootstrap(errs, raw);
  if (!errs.isEmpty || bootstrap === undefined) throw validationError(errs.list());
  return bootstrap;
}

// ---- sources ----

function readFromEnv(env: NodeJS.ProcessEnv): unknown {
  // An empty value counts as unset, as in grpc-go and C-core.
  const file = env[BOOTSTRAP_FILE_ENV];
  if (file) return parseJson(readBootstrapFile(file), `${BOOTSTRAP_FILE_ENV} file ${file}`);
  const config = env[BOOTSTRAP_CONFIG_ENV];
  if (config) return parseJson(config, BOOTSTRAP_CONFIG_ENV);
  throw bootstrapError(
    `neither ${BOOTSTRAP_FILE_ENV} (a file path) nor ${BOOTSTRAP_CONFIG_ENV} (JSON text) is set`,
  );
}

function readBootstrapFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw bootstrapError(`${BOOTSTRAP_FILE_ENV} file ${path}: cannot read: ${errorText(err)}`, {
      cause: err,
    });
  }
}

/** `source` names where the text came from, so the user knows which file or variable to fix. */
function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw bootstrapError(`${source}: invalid JSON: ${errorText(err)}`, { cause: err });
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function bootstrapError(message: string, options: XdsErrorOptions = {}): XdsError {
  return new XdsError(status.INVALID_ARGUMENT, ERROR_PREFIX + message, options);
}

function validationError(details: readonly FieldError[]): XdsError {
  return bootstrapError(formatFieldErrors(details), { details });
}

// ---- top level ----

/** Returns undefined only if the root is not an object; otherwise check `errs`. */
function parseBootstrap(errs: ValidationErrors, raw: unknown): Bootstrap | undefined {
  if (!isObject(raw)) {
    errs.add(`the bootstrap must be a JSON object (got ${typeName(raw)})`);
    return undefined;
  }
  const xdsServers = errs.field('xds_servers', () =>
    parseTopLevelServers(errs, own(raw, 'xds_servers')),
  );
  const node = errs.field('node', () => parseNode(errs, own(raw, 'node')));
  const authorities = parseAuthorities(errs, own(raw, 'authorities'));
  const clientDefaultListenerResourceNameTemplate =
    optionalString(errs, raw, 'client_default_listener_resource_name_template') ??
    DEFAULT_CLIENT_LISTENER_TEMPLATE;
  const serverListenerResourceNameTemplate = optionalString(
    errs,
    raw,
    'server_listener_resource_name_template',
  );
  const certificateProviders = new FrozenMap(
    parseCertificateProviders(errs, own(raw, 'certificate_providers')),
  );
  return Object.freeze({
    xdsServers,
    node,
    authorities,
    clientDefaultListenerResourceNameTemplate,
    serverListenerResourceNameTemplate,
    certificateProviders,
  });
}

/** A27: the top-level list is required and non-empty, even if every authority has its own. */
function parseTopLevelServers(errs: ValidationErrors, value: unknown): readonly XdsServerConfig[] {
  if (value === undefined) {
    errs.add('field not present');
    return Object.freeze([]);
  }
  if (Array.isArray(value) && value.length === 0) errs.add('must be non-empty');
  return parseServers(errs, value);
}

// ---- xds_servers ----

function parseServers(errs: ValidationErrors, value: unknown): readonly XdsServerConfig[] {
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
  const match = typeof value === 'string' ? /^(\d+)(?:\.(\d{1,9}))?s$/.exec(value) : null;
  if (!match) {
    errs.add(
      `must be a duration string such as "1s" or "0.5s" (got ${typeof value === 'string' ? JSON.stringify(value) : typeName(value)})`,
    );
    return undefined;
  }
  const ms = Number(match[1]) * 1000 + Number(`0.${match[2] ?? '0'}`) * 1000;
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
      selected = Object.freeze({ type: creds.type, config: creds.config });
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
}

function parseChannelCreds(errs: ValidationErrors, value: unknown): ParsedCreds | undefined {
  const obj = asObject(errs, value);
  if (obj === undefined) return undefined;
  const type = requiredString(errs, obj, 'type');
  const config = errs.field('config', () => parseCredsConfig(errs, type, own(obj, 'config')));
  return { type, config };
}

function parseCredsConfig(
  errs: ValidationErrors,
  type: string | undefined,
  value: unknown,
): Readonly<JsonObject> | undefined {
  if (value === undefined) return EMPTY_CONFIG;
  const obj = asObject(errs, value);
  if (obj === undefined) return undefined;
  // Other types' configs are opaque to us: a newer client may understand them.
  if (type === 'tls') validateTlsConfig(errs, obj);
  return frozenJsonObject(errs, obj);
}

function validateTlsConfig(errs: ValidationErrors, config: JsonObject): void {
  // The same fields as a file_watcher certificate provider, none required (gRFC A65).
  parseTlsCredsConfig(errs, config);
}

function parseServerFeatures(errs: ValidationErrors, value: unknown): readonly string[] {
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value)) {
    errs.add(`must be an array (got ${typeName(value)})`);
    return Object.freeze([]);
  }
  const features: string[] = [];
  value.forEach((feature: unknown, i) => {
    if (typeof feature === 'string') features.push(feature);
    else errs.index(i, () => errs.add(mustBe('a string', feature)));
  });
  return Object.freeze(features);
}

function isSupportedCredsType(type: string): type is ChannelCredsType {
  return (SUPPORTED_CREDS_TYPES as readonly string[]).includes(type);
}

// ---- node ----

/** A27 requires nothing of `node`; a missing id is sent as ''. */
function parseNode(errs: ValidationErrors, value: unknown): NodeConfig {
  if (value === undefined) return EMPTY_NODE;
  const obj = asObject(errs, value);
  if (obj === undefined) return EMPTY_NODE;
  const id = optionalString(errs, obj, 'id') ?? '';
  const cluster = optionalString(errs, obj, 'cluster') ?? '';
  const locality = errs.field('locality', () => parseLocality(errs, own(obj, 'locality')));
  const metadata = errs.field('metadata', () => parseMetadata(errs, own(obj, 'metadata')));
  return Object.freeze({ id, cluster, locality, metadata });
}

function parseLocality(errs: ValidationErrors, value: unknown): LocalityConfig | undefined {
  if (value === undefined) return undefined;
  const obj = asObject(errs, value);
  if (obj === undefined) return undefined;
  return Object.freeze({
    region: optionalString(errs, obj, 'region') ?? '',
    zone: optionalString(errs, obj, 'zone') ?? '',
    subZone: optionalString(errs, obj, 'sub_zone') ?? '',
  });
}

/** A google.protobuf.Struct: any JSON object. */
function parseMetadata(errs: ValidationErrors, value: unknown): Readonly<JsonObject> | undefined {
  if (value === undefined) return undefined;
  const obj = asObject(errs, value);
  return obj === undefined ? undefined : frozenJsonObject(errs, obj);
}

// ---- authorities (gRFC A47) ----

function parseAuthorities(
  errs: ValidationErrors,
  value: unknown,
): ReadonlyMap<string, AuthorityConfig> {
  const authorities: [string, AuthorityConfig][] = [];
  if (value !== undefined) {
    const obj = errs.field('authorities', () => asObject(errs, value));
    for (const [name, entry] of Object.entries(obj ?? {})) {
      // Authority names are arbitrary strings: quote them so the path stays unambiguous.
      // `authorities` is a top-level field, so this is the whole path.
      const path = `authorities[${JSON.stringify(name)}]`;
      const authority = errs.field(path, () => parseAuthority(errs, name, entry));
      if (authority !== undefined) authorities.push([name, authority]);
    }
  }
  return new FrozenMap(authorities);
}

function parseAuthority(
  errs: ValidationErrors,
  name: string,
  value: unknown,
): AuthorityConfig | undefined {
  const obj = asObject(errs, value);
  if (obj === undefined) return undefined;
  const prefix = `xdstp://${name}/`;
  const template = optionalString(errs, obj, 'client_listener_resource_name_template');
  if (template !== undefined && !template.startsWith(prefix)) {
    errs.addAt(
      'client_listener_resource_name_template',
      `must start with "${prefix}" (got ${JSON.stringify(template)})`,
    );
  }
  // Unlike the top level, an empty or missing list is fine: it means the top-level servers.
  const serversValue = own(obj, 'xds_servers');
  const xdsServers =
    serversValue === undefined
      ? Object.freeze([])
      : errs.field('xds_servers', () => parseServers(errs, serversValue));
  return Object.freeze({
    name,
    xdsServers,
    clientListenerResourceNameTemplate: template ?? `${prefix}envoy.config.listener.v3.Listener/%s`,
  });
}

/** A Map that cannot change after construction: `ReadonlyMap` alone only stops TypeScript. */
class FrozenMap<K, V> extends Map<K, V> {
  constructor(entries: Iterable<readonly [K, V]>) {
    super();
    for (const [key, value] of entries) super.set(key, value);
    Object.freeze(this);
  }

  override set(_key: K, _value: V): this {
    throw new TypeError('the xDS bootstrap is frozen');
  }

  override delete(_key: K): boolean {
    throw new TypeError('the xDS bootstrap is frozen');
  }

  override clear(): void {
    throw new TypeError('the xDS bootstrap is frozen');
  }
}

// ---- JSON helpers ----

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `array` and `null` rather than typeof's `object`, which would confuse the reader. */
function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function mustBe(what: string, value: unknown): string {
  return `must be ${what} (got ${typeName(value)})`;
}

/** Own properties only: an object input must not pick up fields from a polluted prototype. */
function own(obj: JsonObject, name: string): unknown {
  return Object.hasOwn(obj, name) ? obj[name] : undefined;
}

function asObject(errs: ValidationErrors, value: unknown): JsonObject | undefined {
  if (isObject(value)) return value;
  errs.add(mustBe('an object', value));
  return undefined;
}

function optionalString(errs: ValidationErrors, obj: JsonObject, name: string): string | undefined {
  const value = own(obj, name);
  if (value === undefined || typeof value === 'string') return value;
  errs.addAt(name, mustBe('a string', value));
  return undefined;
}

function requiredString(errs: ValidationErrors, obj: JsonObject, name: string): string | undefined {
  if (own(obj, name) === undefined) {
    errs.addAt(name, 'field not present');
    return undefined;
  }
  return optionalString(errs, obj, name);
}

/**
 * A frozen deep copy, so that later changes to an object input cannot reach the shared
 * bootstrap. Values JSON cannot carry (functions, NaN, cycles: possible only in an object input)
 * are errors. Undefined if any was found.
 */
function frozenJsonObject(
  errs: ValidationErrors,
  obj: JsonObject,
): Readonly<JsonObject> | undefined {
  const before = errs.count;
  const copy = frozenJson(errs, obj, new Set());
  return errs.count === before ? (copy as Readonly<JsonObject>) : undefined;
}

function frozenJson(errs: ValidationErrors, value: unknown, ancestors: Set<object>): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) errs.add(`must be a finite number (got ${value})`);
    return value;
  }
  if (typeof value !== 'object') {
    errs.add(mustBe('a JSON value', value));
    return undefined;
  }
  if (ancestors.has(value)) {
    errs.add('must not contain a cycle');
    return undefined;
  }
  ancestors.add(value);
  const copy = Array.isArray(value)
    ? value.map((item: unknown, i) => errs.index(i, () => frozenJson(errs, item, ancestors)))
    : frozenJsonEntries(errs, value as JsonObject, ancestors);
  ancestors.delete(value);
  return Object.freeze(copy);
}

function frozenJsonEntries(
  errs: ValidationErrors,
  obj: JsonObject,
  ancestors: Set<object>,
): JsonObject {
  // fromEntries defines own properties, so a "__proto__" key stays data, not a prototype.
  return Object.fromEntries(
    Object.entries(obj)
      // An undefined property is an absent one, as JSON.stringify treats it.
      .filter(([, item]) => item !== undefined)
      .map(([key, item]) => [key, errs.field(key, () => frozenJson(errs, item, ancestors))]),
  );
}
