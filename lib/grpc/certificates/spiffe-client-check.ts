// gRFC A87 on the server: a filter chain whose CA provider reads a SPIFFE trust bundle map
// verifies each client certificate against the roots of the client's trust domain. grpc-js
// terminates TLS inside its connection injector, verifying against every domain's roots, and
// offers no hook after the handshake; so the trust-domain check runs on each RPC, before the
// chain's admission, and refuses the RPC with UNAVAILABLE saying why. grpc-js shows a server
// the client's leaf certificate only: the leaf must be issued by a root of its trust domain.
import { X509Certificate } from 'node:crypto';
import { Metadata, ServerInterceptingCall, status, type ServerInterceptor } from '@grpc/grpc-js';
import type { CaUpdate } from '../../client/credentials/certificate-file-watcher';
import type { ProviderLease } from './provider-store';
import { spiffeVerificationFailure } from './spiffe-verification';

export interface SpiffeClientCheck {
  readonly interceptor: ServerInterceptor;
  /** Stops following the provider (the lease itself is released by its owner). */
  stop(): void;
}

/** Follows `ca`'s trust bundle map and refuses RPCs whose client certificate fails against it. */
export function spiffeClientCheck(ca: ProviderLease): SpiffeClientCheck {
  let latest: CaUpdate | null | undefined;
  const listener = (update: CaUpdate | null) => (latest = update);
  ca.provider.addCaCertificateListener(listener);
  const refusal = (certificate: Buffer): string | undefined => {
    const map = latest?.spiffeBundleMap;
    if (!map) return `no SPIFFE trust bundle map: ${ca.problem ?? 'not read yet'}`;
    const failure = spiffeVerificationFailure([new X509Certificate(certificate)], map);
    return failure && `SPIFFE verification failed: ${failure}`;
  };
  const interceptor: ServerInterceptor = (_method, call) =>
    new ServerInterceptingCall(call, {
      start: (next) => {
        next({
          onReceiveMetadata: (metadata, nextMetadata) => {
            let problem: string | undefined;
            try {
              const certificate = call.getAuthContext().sslPeerCertificate;
              problem = certificate && refusal(certificate.raw);
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
  return { interceptor, stop: () => ca.provider.removeCaCertificateListener(listener) };
}
