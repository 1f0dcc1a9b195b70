// What RBAC (gRFC A41) sees of one RPC: the request the server builds from the call, and the
// header values its header matchers read.
import type { Metadata } from '@grpc/grpc-js';
import type { PeerIdentity } from './peer-identity';

/** What RBAC may look at of one RPC. */
export interface RbacRequest {
  /** `/package.Service/Method`: the `:path` header and `url_path`. */
  readonly path: string;
  /** The `:authority` header (or `host`, when the client sent no `:authority`). */
  readonly authority: string;
  /** The call's metadata as grpc-js hands it to server interceptors. */
  readonly metadata: Metadata;
  /** The connection's local address and port (`destination_ip`, `destination_port`). */
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  /** The connection's peer address (`source_ip`, `direct_remote_ip`, `remote_ip`). */
  readonly remoteAddress: string | undefined;
  /** Whether the connection uses TLS (`authenticated` needs it). */
  readonly tls: boolean;
  /** The verified client certificate's identity; undefined without one. */
  readonly peer: PeerIdentity | undefined;
}

/**
 * grpc-js strips `content-type` from server metadata before interceptors run, and accepts only
 * gRPC content types; its clients send exactly this value (docs/server.md says so).
 */
const GRPC_CONTENT_TYPE = 'application/grpc';

/**
 * The value an RBAC header matcher sees (A41): pseudo-headers `:method` (always POST for
 * gRPC), `:authority` and `:path`; binary headers in base64; several values joined with ','.
 * `te` and other pseudo-headers count as absent.
 */
export function rbacHeaderValue(request: RbacRequest, name: string): string | undefined {
  switch (name) {
    case ':method':
      return 'POST';
    case ':authority':
      return request.authority;
    case ':path':
      return request.path;
    case 'content-type':
      return GRPC_CONTENT_TYPE;
    case 'te':
      return undefined;
  }
  if (name.startsWith(':')) return undefined;
  const values = request.metadata.get(name);
  if (values.length === 0) return undefined;
  return values.map((v) => (typeof v === 'string' ? v : v.toString('base64'))).join(',');
}
