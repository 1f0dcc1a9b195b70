// Whether the connection an RPC is about to use is TLS (gRFC A83: an ID token must never leave
// on an insecure connection). grpc-js tells neither a picker nor a call credential: the
// channel's credentials are out of the LB policies' reach, and XdsChannelCredentials chooses
// TLS or its fallback per cluster anyway. What settles it is the connection itself: the
// http2 session of the subchannel's transport says whether its socket is a TLSSocket
// (`encrypted`). Those fields are grpc-js internals, read defensively (decision 0058): if
// they are not where they should be, the answer is "unknown", which callers treat as insecure.
import { CallCredentials, type experimental, type status } from '@grpc/grpc-js';

/**
 * 'unconnected': the subchannel lost its connection since the pick; 'unknown': grpc-js no
 * longer keeps the fields this reads.
 */
export type ConnectionSecurity = 'tls' | 'insecure' | 'unconnected' | 'unknown';

interface TransportView {
  readonly session?: { readonly encrypted?: boolean } | null;
}

/** The security of the connection `subchannel` (READY, just picked) carries RPCs on. */
export function connectionSecurity(
  subchannel: experimental.SubchannelInterface,
): ConnectionSecurity {
  const real: object = subchannel.getRealSubchannel();
  // Checked with `in` so that a subchannel without a connection (transport null) is told from
  // a grpc-js whose subchannels keep their transport elsewhere.
  if (!('transport' in real)) return 'unknown';
  const transport = (real as { transport?: TransportView | null }).transport;
  const encrypted = transport?.session?.encrypted;
  if (encrypted === true) return 'tls';
  if (encrypted === false) return 'insecure';
  return transport === null ? 'unconnected' : 'unknown';
}

/**
 * Call credentials failing every RPC with `code` and `details`: what a connection that must not
 * carry credentials gets in their place (grpc-js prefixes the details with "Getting metadata
 * from plugin failed with error: ").
 */
export function failingCallCredentials(code: status, details: string): CallCredentials {
  return CallCredentials.createFromMetadataGenerator((_options, callback) =>
    callback(Object.assign(new Error(details), { code })),
  );
}
