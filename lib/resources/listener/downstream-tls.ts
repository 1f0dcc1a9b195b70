// A server-side filter chain's `transport_socket` (gRFC A29): a DownstreamTlsContext whose
// certificates come from the bootstrap's certificate provider instances. As on the client side
// (both check the CommonTlsContext with common-tls-context.ts), a setting gRPC cannot
// honour is refused rather than ignored: ignoring it would accept connections the control
// plane meant to refuse.
import {
  DownstreamTlsContext_OcspStaplePolicy,
  type TransportSocket,
} from '../../generated/protos';
import type { ValidationErrors } from '../../validation-errors';
import { readTypedConfig } from '../any';
import { identityProvider, peerValidation, type ProviderNames } from '../common-tls-context';
import type { DownstreamTlsConfig } from './update';

const TLS_SOCKET_NAME = 'envoy.transport_sockets.tls';
const DOWNSTREAM_TLS_CONTEXT =
  'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext' as const;

/** The chain's TLS settings, or undefined after recording errors (at the current path). */
export function downstreamTls(
  socket: TransportSocket,
  errors: ValidationErrors,
  providers: ProviderNames,
): DownstreamTlsConfig | undefined {
  // A29: a transport socket other than TLS is not understood, and NACKs the Listener.
  if (socket.name !== TLS_SOCKET_NAME) {
    errors.addAt('name', `unsupported value "${socket.name}": must be ${TLS_SOCKET_NAME}`);
    return undefined;
  }
  return readTypedConfig(socket.typedConfig, DOWNSTREAM_TLS_CONTEXT, errors, (context) => {
    const before = errors.count;
    // require_sni is for name-based virtual hosting; ignoring it would accept connections
    // without a matching SNI. OCSP stapling beyond "lenient" is not implemented.
    if (context.requireSni?.value === true) errors.addAt('require_sni', 'must not be true');
    if (context.ocspStaplePolicy !== DownstreamTlsContext_OcspStaplePolicy.LENIENT_STAPLING) {
      errors.addAt('ocsp_staple_policy', 'only LENIENT_STAPLING is supported');
    }
    const requireClientCertificate = context.requireClientCertificate?.value === true;
    const common = context.commonTlsContext;
    if (common === null) {
      // The server's identity is required, and it lives there.
      errors.addAt('common_tls_context', 'field not present');
      return undefined;
    }
    const config = errors.field('common_tls_context', () => {
      const identity = identityProvider(common, errors, providers);
      if (
        identity === undefined &&
        common.tlsCertificateProviderInstance === null &&
        common.tlsCertificateCertificateProviderInstance === null
      ) {
        errors.addAt('tls_certificate_provider_instance', 'field not present');
      }
      const validation = peerValidation(common, errors, providers, 'server');
      return { identity, validation };
    });
    // Requiring a client certificate that nothing can verify would refuse every client (A29;
    // C-core and grpc-go NACK it too). Without the requirement, no CA is plain server-side TLS.
    if (
      requireClientCertificate &&
      config.validation?.rootCertificateProvider === undefined &&
      errors.count === before
    ) {
      errors.addAt(
        'require_client_certificate',
        'is true but no ca_certificate_provider_instance verifies client certificates',
      );
    }
    if (errors.count !== before || config.identity === undefined) return undefined;
    return Object.freeze({
      identityCertificateProvider: config.identity,
      rootCertificateProvider: config.validation?.rootCertificateProvider,
      requireClientCertificate,
    });
  });
}
