// The validated forms gRFC A83's GCP authentication filter reads: its own config (from a
// Listener's `http_filters`), and a Cluster's metadata, whose `Audience` entries name the
// audience of the ID tokens sent to that cluster. Rules: docs/gcp-authn.md.

/** A `GcpAuthnFilterConfig`: only the cache size is read (A83). */
export interface GcpAuthnConfig {
  /** `cache_config.cache_size`: how many audiences' credentials are kept. Default 10. */
  readonly cacheSize: number;
}

/**
 * One entry of a Cluster's metadata (A83): from `typed_filter_metadata` when its type is one
 * gRPC parses (only the gcp_authn `Audience`), else from `filter_metadata` as JSON.
 */
export type ClusterMetadataValue =
  | { readonly type: 'audience'; readonly url: string }
  | { readonly type: 'struct'; readonly json: Readonly<Record<string, unknown>> };
