// The validated, frozen bootstrap (gRFC A27, A47, A29): what every client and channel built from
// one bootstrap shares, and the identity of an xDS server entry.
import type { CertificateProviderConfig, FileWatcherConfig } from './certificates';

/** A channel credential this library can use to reach an xDS server. */
export type ChannelCredsType = 'insecure' | 'tls' | 'google_default';

export interface ChannelCredsConfig {
  readonly type: ChannelCredsType;
  /** The `config` object of the bootstrap entry (for `tls`: ca_certificate_file etc.). */
  readonly config: Readonly<Record<string, unknown>>;
  /** For `tls`: its files, as the bootstrap's validation read them (gRFC A65). */
  readonly tls?: FileWatcherConfig;
}

/**
 * A call credential of an xDS server entry (gRFC A97's `call_creds`): `jwt_token_file`, the one
 * type supported, a JWT read from a file and sent as `authorization: Bearer <token>`.
 */
export interface CallCredsConfig {
  readonly type: 'jwt_token_file';
  /** `config.jwt_token_file`, made absolute. */
  readonly jwtTokenFile: string;
  /** Where the entry is in the bootstrap (`xds_servers[0].call_creds[1]`), for errors. */
  readonly field: string;
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
  /**
   * `trusted_xds_server` is in server_features (gRFC A81): its resources may change what RPCs
   * carry (a route's `auto_host_rewrite`). Present, and true, only then.
   */
  readonly trustedXdsServer?: true;
  /**
   * `resource_timer_is_transient_error` is in server_features (gRFC A88): the server reports
   * missing resources itself, so its does-not-exist timer (30 s by default) means "slow", a
   * transient UNAVAILABLE error and the cache state TIMEOUT, not NOT_FOUND. The bootstrap
   * always sets it; absent (a config built by hand) means false.
   */
  readonly resourceTimerIsTransientError?: boolean | undefined;
  /**
   * The supported entries of `call_creds` (gRFC A97), all of them applied to every call to the
   * server (ADS and LRS); absent when there are none. Unsupported types are left out.
   */
  readonly callCreds?: readonly CallCredsConfig[] | undefined;
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
      server.callCreds?.map((creds) => [creds.type, creds.jwtTokenFile]) ?? null,
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
