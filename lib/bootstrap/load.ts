// Loading the gRPC xDS bootstrap (gRFC A27, A47): from an object, a JSON string or the
// environment, validated and deeply frozen. The behavioural reference is gRPC C-core
// (xds_bootstrap_grpc.cc) and grpc-go (internal/xds/bootstrap): unknown fields are ignored,
// every problem is collected and reported at once under its JSON field path.
import { readFileSync } from 'node:fs';
import { status } from '@grpc/grpc-js';
import { XdsError, formatFieldErrors, type FieldError, type XdsErrorOptions } from '../errors';
import { ValidationErrors } from '../validation-errors';
import { errorReason } from '../errors';
import type {
  AuthorityConfig,
  Bootstrap,
  LocalityConfig,
  NodeConfig,
  XdsServerConfig,
} from './config';
import {
  FrozenMap,
  asObject,
  frozenJsonObject,
  isObject,
  optionalString,
  own,
  typeName,
  type JsonObject,
} from './json';
import { certificateParsers } from './optional-parsers';
import { parseServers } from './servers';

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
    throw bootstrapError(`${BOOTSTRAP_FILE_ENV} file ${path}: cannot read: ${errorReason(err)}`, {
      cause: err,
    });
  }
}

/** `source` names where the text came from, so the user knows which file or variable to fix. */
function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw bootstrapError(`${source}: invalid JSON: ${errorReason(err)}`, { cause: err });
  }
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
  const providers = own(raw, 'certificate_providers');
  const certificateProviders = new FrozenMap(
    providers === undefined ? [] : certificateParsers().parseCertificateProviders(errs, providers),
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
