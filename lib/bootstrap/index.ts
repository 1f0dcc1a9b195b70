// The gRPC xDS bootstrap: its types (config.ts), loading and validating it (load.ts, with
// servers.ts and certificates.ts for its larger fields), and the JSON helpers they share
// (json.ts, not exported).
export {
  DEFAULT_REFRESH_DELAY_MS,
  PATH_TYPE_ALIASES,
  XDS_API_TYPES,
  serverKey,
  type AuthorityConfig,
  type Bootstrap,
  type CallCredsConfig,
  type ChannelCredsConfig,
  type ChannelCredsType,
  type LocalityConfig,
  type NodeConfig,
  type XdsApiType,
  type XdsServerConfig,
} from './config';
export { loadBootstrap, type BootstrapSources } from './load';
export { type CertificateProviderConfig, type FileWatcherConfig } from './certificates';
