// A gRPC xDS bootstrap (gRFC A27, A47) as a plain object, in the snake_case of a bootstrap file,
// so that what a test hands to XdsClient is exactly what a user would write.

// Type aliases rather than interfaces: they are assignable to Record<string, unknown>, so a test
// can treat the bootstrap as the plain JSON object it is and add fields to it.

export type BootstrapServerJson = {
  server_uri: string;
  channel_creds: { type: string; config?: Record<string, unknown> }[];
  /** gRFC A97, e.g. `[{ type: 'jwt_token_file', config: { jwt_token_file: path } }]`. */
  call_creds?: { type: string; config?: Record<string, unknown> }[];
  server_features?: string[];
  /** 'AGGREGATED_GRPC' (SotW, the default) or 'AGGREGATED_DELTA_GRPC' (incremental). */
  api_type?: string;
  refresh_delay?: string;
};

export type BootstrapAuthorityJson = {
  xds_servers?: BootstrapServerJson[];
  client_listener_resource_name_template?: string;
};

export type BootstrapJson = {
  xds_servers: BootstrapServerJson[];
  node: { id: string; cluster?: string };
  authorities?: Record<string, BootstrapAuthorityJson>;
  client_default_listener_resource_name_template?: string;
  server_listener_resource_name_template?: string;
  certificate_providers?: Record<string, BootstrapCertificateProviderJson>;
};

export type BootstrapCertificateProviderJson = {
  plugin_name: string;
  config?: Record<string, unknown>;
};

/** A `file_watcher` certificate provider instance (gRFC A29): the files it reads. */
export interface FileWatcherOptions {
  certificateFile?: string;
  privateKeyFile?: string;
  caCertificateFile?: string;
  /** gRFC A87: verify peers against their trust domain's roots in this map instead. */
  spiffeTrustBundleMapFile?: string;
  /** Proto3 JSON Duration, e.g. '0.1s' for tests that rotate certificates. Default 10 min. */
  refreshInterval?: string;
}

export interface AuthorityOptions {
  /**
   * Default: none, which gRFC A47 reads as "the top-level xds_servers", this server. To put
   * an authority on another test server: `xdsServers: other.bootstrap().xds_servers`.
   */
  xdsServers?: readonly BootstrapServerJson[];
  /** Default (A47): `xdstp://<authority>/envoy.config.listener.v3.Listener/%s`. */
  clientListenerResourceNameTemplate?: string;
}

export interface BootstrapOptions {
  /** Default 'test-node'. */
  nodeId?: string;
  /** This server's `channel_creds`. Default `[{ type: 'insecure' }]`. */
  channelCreds?: BootstrapServerJson['channel_creds'];
  /** This server's `call_creds` (gRFC A97). Default: none. */
  callCreds?: BootstrapServerJson['call_creds'];
  nodeCluster?: string;
  /** `server_features` of this server's entry, e.g. ['ignore_resource_deletion']. */
  serverFeatures?: readonly string[];
  /**
   * `api_type` of this server's entry: 'AGGREGATED_DELTA_GRPC' for incremental ADS, 'GRPC' and
   * 'DELTA_GRPC' for the per-type services, 'REST' for REST-JSON polling of the server's
   * `restUrl` (docs/transports.md).
   */
  apiType?: 'AGGREGATED_GRPC' | 'AGGREGATED_DELTA_GRPC' | 'GRPC' | 'DELTA_GRPC' | 'REST';
  /** With `apiType: 'REST'`: `refresh_delay`, the poll period (default "1s"). */
  refreshDelay?: string;
  /** Names (each with the defaults) or names with options. */
  authorities?: readonly string[] | Readonly<Record<string, AuthorityOptions>>;
  clientDefaultListenerResourceNameTemplate?: string;
  /** For XdsServer (gRFC A36), e.g. 'grpc/server?xds.resource.listening_address=%s'. */
  serverListenerResourceNameTemplate?: string;
  /**
   * `certificate_providers`: `file_watcher` instances by name, for the TLS settings of
   * clusters and server Listeners (e.g. the paths `writeCertificateFiles` returns).
   */
  certificateProviders?: Readonly<Record<string, FileWatcherOptions>>;
}

const DEFAULT_NODE_ID = 'test-node';

/** A fresh object on every call: tests may change it freely. */
export function buildBootstrap(serverUri: string, options: BootstrapOptions = {}): BootstrapJson {
  const server: BootstrapServerJson = {
    server_uri: serverUri,
    channel_creds: options.channelCreds
      ? options.channelCreds.map((c) => ({ ...c }))
      : [{ type: 'insecure' }],
  };
  if (options.callCreds) server.call_creds = structuredClone(options.callCreds);
  if (options.serverFeatures) server.server_features = [...options.serverFeatures];
  if (options.apiType !== undefined) server.api_type = options.apiType;
  if (options.refreshDelay !== undefined) server.refresh_delay = options.refreshDelay;
  const bootstrap: BootstrapJson = {
    xds_servers: [server],
    node: { id: options.nodeId ?? DEFAULT_NODE_ID },
  };
  if (options.nodeCluster !== undefined) bootstrap.node.cluster = options.nodeCluster;
  if (options.authorities) bootstrap.authorities = buildAuthorities(options.authorities);
  if (options.clientDefaultListenerResourceNameTemplate !== undefined) {
    bootstrap.client_default_listener_resource_name_template =
      options.clientDefaultListenerResourceNameTemplate;
  }
  if (options.serverListenerResourceNameTemplate !== undefined) {
    bootstrap.server_listener_resource_name_template = options.serverListenerResourceNameTemplate;
  }
  if (options.certificateProviders) {
    bootstrap.certificate_providers = buildCertificateProviders(options.certificateProviders);
  }
  return bootstrap;
}

function buildAuthorities(
  authorities: readonly string[] | Readonly<Record<string, AuthorityOptions>>,
): Record<string, BootstrapAuthorityJson> {
  const entries: [string, AuthorityOptions][] = isNameList(authorities)
    ? authorities.map((name) => [name, {}])
    : Object.entries(authorities);
  const out: Record<string, BootstrapAuthorityJson> = {};
  for (const [name, options] of entries) {
    const authority: BootstrapAuthorityJson = {};
    if (options.xdsServers) authority.xds_servers = structuredClone([...options.xdsServers]);
    if (options.clientListenerResourceNameTemplate !== undefined) {
      authority.client_listener_resource_name_template = options.clientListenerResourceNameTemplate;
    }
    out[name] = authority;
  }
  return out;
}

function buildCertificateProviders(
  providers: Readonly<Record<string, FileWatcherOptions>>,
): Record<string, BootstrapCertificateProviderJson> {
  const out: Record<string, BootstrapCertificateProviderJson> = {};
  for (const [name, files] of Object.entries(providers)) {
    const config: Record<string, unknown> = {};
    if (files.certificateFile !== undefined) config['certificate_file'] = files.certificateFile;
    if (files.privateKeyFile !== undefined) config['private_key_file'] = files.privateKeyFile;
    if (files.caCertificateFile !== undefined) {
      config['ca_certificate_file'] = files.caCertificateFile;
    }
    if (files.spiffeTrustBundleMapFile !== undefined) {
      config['spiffe_trust_bundle_map_file'] = files.spiffeTrustBundleMapFile;
    }
    if (files.refreshInterval !== undefined) config['refresh_interval'] = files.refreshInterval;
    out[name] = { plugin_name: 'file_watcher', config };
  }
  return out;
}

function isNameList(
  authorities: readonly string[] | Readonly<Record<string, AuthorityOptions>>,
): authorities is readonly string[] {
  return Array.isArray(authorities);
}
