// `xds-client bootstrap`, and where every command gets its bootstrap: --bootstrap FILE,
// --server HOST:PORT --node-id ID, or the gRPC environment variables.
import { readFileSync } from 'node:fs';
import { loadBootstrap, type Bootstrap } from '../bootstrap';
import { noPositionals, parseArgs, type FlagSpecs, type ParsedArgs } from './args';
import { CliError, EXIT, UsageError, messageOf } from './errors';
import { BOOTSTRAP_HELP } from './help';

/** The flags that describe one xDS server without a file (watch and bootstrap share them). */
export const SERVER_FLAGS: FlagSpecs = {
  server: { kind: 'string', value: 'HOST:PORT' },
  'node-id': { kind: 'string', value: 'ID' },
  'node-cluster': { kind: 'string', value: 'NAME' },
  tls: { kind: 'boolean' },
  feature: { kind: 'list', value: 'FEATURE' },
  delta: { kind: 'boolean' },
};

const DELTA_API_TYPE = 'AGGREGATED_DELTA_GRPC';

/** A bootstrap file's JSON, in its snake_case. */
export interface BootstrapFileJson {
  xds_servers: {
    server_uri: string;
    channel_creds: { type: string }[];
    server_features?: string[];
    api_type?: string;
  }[];
  node: { id: string; cluster?: string };
}

/** What a command connects with: the raw JSON for XdsClient (undefined: the env vars). */
export interface ResolvedBootstrap {
  readonly json: object | undefined;
  readonly bootstrap: Bootstrap;
  /** Where it came from, for messages: a file name, "--server", or an env var. */
  readonly source: string;
  /** The first xDS server's URI. */
  readonly serverUri: string;
}

const HOST_PORT = /^(?:\[[0-9a-fA-F:.%]+\]|[^\s:/[\]]+):(\d{1,5})$/;
const GRPC_SCHEME = /^(?:dns|unix|unix-abstract|ipv4|ipv6):/;

/** `--server`: `host:port`, `[v6]:port`, or a grpc-js target such as `dns:///host:port`. */
export function checkServerUri(value: string): string {
  const port = HOST_PORT.exec(value)?.[1];
  if (port !== undefined && Number(port) >= 1 && Number(port) <= 65535) return value;
  if (port === undefined && GRPC_SCHEME.test(value)) return value;
  throw new UsageError(
    `--server must be HOST:PORT (e.g. 127.0.0.1:18000) or a gRPC target, got "${value}"`,
  );
}

/** The bootstrap JSON the server flags describe; undefined when --server is absent. */
export function bootstrapFromFlags(args: ParsedArgs): BootstrapFileJson | undefined {
  const server = args.string('server');
  if (server === undefined) {
    for (const flag of ['node-id', 'node-cluster', 'tls', 'feature']) {
      if (args.has(flag)) throw new UsageError(`--${flag} needs --server HOST:PORT`);
    }
    return undefined;
  }
  const nodeId = args.string('node-id');
  if (nodeId === undefined) {
    throw new UsageError('--server needs --node-id ID (the node id your control plane expects)');
  }
  const entry: BootstrapFileJson['xds_servers'][number] = {
    server_uri: checkServerUri(server),
    channel_creds: [{ type: args.bool('tls') ? 'tls' : 'insecure' }],
  };
  const features = args.list('feature');
  if (features.length) entry.server_features = [...new Set(features)];
  if (args.bool('delta')) entry.api_type = DELTA_API_TYPE;
  const json: BootstrapFileJson = { xds_servers: [entry], node: { id: nodeId } };
  const cluster = args.string('node-cluster');
  if (cluster !== undefined) json.node.cluster = cluster;
  return json;
}

/** The bootstrap for a command: --bootstrap FILE, the server flags, or the env vars. */
export function resolveBootstrap(args: ParsedArgs, env = process.env): ResolvedBootstrap {
  const file = args.string('bootstrap');
  const fromFlags = bootstrapFromFlags(args);
  if (file !== undefined && fromFlags) {
    throw new UsageError('pass either --bootstrap FILE or --server HOST:PORT, not both');
  }
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : messageOf(e);
      throw new CliError(EXIT.USAGE, `cannot read bootstrap file ${file}: ${why}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw badBootstrap(`bootstrap file ${file}`, `invalid JSON: ${messageOf(e)}`);
    }
    if (typeof json !== 'object' || json === null) {
      throw badBootstrap(`bootstrap file ${file}`, 'must be a JSON object');
    }
    if (args.bool('delta')) json = withDelta(json as Record<string, unknown>);
    return validated(json as object, `bootstrap file ${file}`);
  }
  if (fromFlags) return validated(fromFlags, '--server');
  if (args.bool('delta')) {
    throw new UsageError('--delta needs --server HOST:PORT or --bootstrap FILE');
  }
  const envFile = env['GRPC_XDS_BOOTSTRAP'];
  const envConfig = env['GRPC_XDS_BOOTSTRAP_CONFIG'];
  if (!envFile && !envConfig) {
    throw new UsageError(
      'no xDS server: pass --server HOST:PORT --node-id ID, or --bootstrap FILE, ' +
        'or set GRPC_XDS_BOOTSTRAP',
    );
  }
  const source = envFile ? `GRPC_XDS_BOOTSTRAP=${envFile}` : 'GRPC_XDS_BOOTSTRAP_CONFIG';
  try {
    const bootstrap = loadBootstrap(undefined, { env });
    return { json: undefined, bootstrap, source, serverUri: firstServer(bootstrap) };
  } catch (e) {
    throw badBootstrap(source, stripPrefix(messageOf(e)));
  }
}

/** The incremental variant of each gRPC api_type; REST and FILESYSTEM have none. */
const DELTA_OF: Readonly<Record<string, string>> = {
  AGGREGATED_GRPC: DELTA_API_TYPE,
  GRPC: 'DELTA_GRPC',
};

/** --delta with a bootstrap file: every gRPC server entry speaks the incremental protocol. */
function withDelta(json: Record<string, unknown>): Record<string, unknown> {
  const servers = json['xds_servers'];
  if (!Array.isArray(servers)) return json; // the bootstrap's own check says what is wrong
  const delta = (entry: unknown) => {
    if (typeof entry !== 'object' || entry === null) return entry;
    const apiType = (entry as { api_type?: unknown }).api_type ?? 'AGGREGATED_GRPC';
    const incremental = typeof apiType === 'string' ? DELTA_OF[apiType] : undefined;
    return incremental === undefined ? entry : { ...entry, api_type: incremental };
  };
  return { ...json, xds_servers: servers.map(delta) };
}

function validated(json: object, source: string): ResolvedBootstrap {
  try {
    const bootstrap = loadBootstrap(json);
    return { json, bootstrap, source, serverUri: firstServer(bootstrap) };
  } catch (e) {
    throw badBootstrap(source, stripPrefix(messageOf(e)));
  }
}

function firstServer(bootstrap: Bootstrap): string {
  return bootstrap.xdsServers[0]?.serverUri ?? '(none)';
}

function stripPrefix(message: string): string {
  return message.replace(/^invalid xDS bootstrap: /, '');
}

function badBootstrap(source: string, why: string): CliError {
  return new CliError(
    EXIT.USAGE,
    `invalid xDS bootstrap (${source}): ${why}; fix it, or write one with ` +
      `xds-client bootstrap --server HOST:PORT --node-id ID`,
  );
}

/** `xds-client bootstrap`: print a bootstrap file for one server, validated first. */
export function runBootstrap(argv: readonly string[], out: (line: string) => void): number {
  const args = parseArgs('bootstrap', argv, {
    ...SERVER_FLAGS,
    help: { kind: 'boolean', short: 'h' },
  });
  if (args.bool('help')) {
    out(BOOTSTRAP_HELP);
    return EXIT.OK;
  }
  noPositionals('bootstrap', args);
  const json = bootstrapFromFlags(args);
  if (!json) {
    throw new UsageError('bootstrap needs --server HOST:PORT --node-id ID');
  }
  validated(json, 'the flags');
  out(JSON.stringify(json, null, 2));
  return EXIT.OK;
}
