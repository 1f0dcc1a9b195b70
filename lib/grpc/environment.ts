// The plugin's environment switches, read here alone (as bootstrap.ts and trace.ts read theirs),
// at call time: a test may set one, and nothing is read at import.

/** gRFC A115's switch back to A56's retention of children dropped from a priority config. */
export const CHILD_POLICY_CACHE_ENV = 'GRPC_EXPERIMENTAL_ENABLE_PRIORITY_LB_CHILD_POLICY_CACHE';

/** Whether a child dropped from a priority config is retained (A56) rather than destroyed (A115). */
export function priorityRetainsDroppedChildren(): boolean {
  return process.env[CHILD_POLICY_CACHE_ENV]?.toLowerCase() === 'true';
}

/**
 * Where the GCE metadata server is, as Google's auth libraries read it (gcp-metadata):
 * GCE_METADATA_IP, else GCE_METADATA_HOST, a `host[:port]`; else gRFC A83's default name.
 */
export function gceMetadataHost(): string {
  return process.env.GCE_METADATA_IP || process.env.GCE_METADATA_HOST || 'metadata.google.internal';
}
