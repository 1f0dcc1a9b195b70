// gRFC A87 on the server: a filter chain whose CA provider reads a SPIFFE trust bundle map
// verifies each client certificate against the roots of the client's trust domain. grpc-js
// verifies the handshake against every domain's roots; this module says whether the chain the
// client sent leads to a root of its own domain. XdsServer runs that check on the TLS socket
// right after the handshake, before grpc-js sees the connection
// (server/handshake-check.ts, decision 0059). Where it cannot, the same check runs on each RPC,
// before the chain's admission, with the leaf only (grpc-js shows an RPC no more), so there the
// leaf must be issued by a root of its trust domain (decision 0044); that check is remembered
// per certificate (spiffe-leaf-check.ts).
import type { TLSSocket } from 'node:tls';
import { Metadata, ServerInterceptingCall, status, type ServerInterceptor } from '@grpc/grpc-js';
import type { CaUpdate } from '../../client/credentials/certificate-file-watcher';
import type { SpiffeBundleMap } from '../../client/credentials/spiffe-bundle-map';
import type { ProviderLease } from './provider-store';
import { SpiffeLeafCheck } from './spiffe-leaf-check';
import { peerChain, spiffeVerificationFailure } from './spiffe-verification';

export interface SpiffeClientCheck {
  /**
   * Why the client of a TLS connection just handshaken is refused, or undefined to accept it
   * (a client without a certificate is left to the chain's `require_client_certificate`).
   */
  connectionRefusal(socket: TLSSocket): string | undefined;
  /** The check on each RPC, where it cannot run on the connection: the leaf only. */
  readonly interceptor: ServerInterceptor;
  /** Stops following the provider (the lease itself is released by its owner). */
  stop(): void;
}

/** Follows `ca`'s trust bundle map and refuses clients whose certificate fails against it. */
export function spiffeClientCheck(ca: ProviderLease): SpiffeClientCheck {
  let latest: CaUpdate | null | undefined;
  const listener = (update: CaUpdate | null) => (latest = update);
  ca.provider.addCaCertificateListener(listener);
  const leafCheck = new SpiffeLeafCheck();
  /** Why the client is refused: `failure` of the bundle map, or the lack of one. */
  const refusal = (failure: (map: SpiffeBundleMap) => string | undefined): string | undefined => {
    const map = latest?.spiffeBundleMap;
    if (!map) return `no SPIFFE trust bundle map: ${ca.problem ?? 'not read yet'}`;
    const problem = failure(map);
    return problem && `SPIFFE verification failed: ${problem}`;
  };
  const connectionRefusal = (socket: TLSSocket): string | undefined => {
    try {
      const certificate = socket.getPeerCertificate(true);
      if (!certificate?.raw) return undefined;
      const chain = peerChain(certificate);
      return refusal((map) => spiffeVerificationFailure(chain, map));
    } catch (e) {
      // An unexpected error refuses the client rather than let it in unchecked.
      return `cannot verify the client certificate: ${String(e)}`;
    }
  };
  const interceptor: ServerInterceptor = (_method, call) =>
    new ServerInterceptingCall(call, {
      start: (next) => {
        next({
          onReceiveMetadata: (metadata, nextMetadata) => {
            let problem: string | undefined;
            try {
              const certificate = call.getAuthContext().sslPeerCertificate;
              // Remembered per certificate: the connection's other RPCs parse nothing.
              problem = certificate && refusal((map) => leafCheck.refusal(certificate, map));
            } catch (e) {
              // Nothing may throw into grpc-js: an unexpected error refuses the RPC.
              problem = String(e);
            }
            if (problem === undefined) nextMetadata(metadata);
            else {
              call.sendStatus({
                code: status.UNAVAILABLE,
                details: `XdsServer: client certificate refused: ${problem}`,
                metadata: new Metadata(),
              });
            }
          },
        });
      },
    });
  return {
    connectionRefusal,
    interceptor,
    stop: () => ca.provider.removeCaCertificateListener(listener),
  };
}
