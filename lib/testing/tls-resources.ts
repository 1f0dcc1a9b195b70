// Builders for gRFC A29's TLS settings as proto3 JSON: the `transport_socket` of a Cluster
// (UpstreamTlsContext) and of a server Listener's filter chain (DownstreamTlsContext), naming
// the bootstrap's certificate provider instances (see BootstrapOptions.certificateProviders).
import { TYPE_URL_PREFIX } from '../codec';
/** Proto3 JSON of one message (as resources.ts's JsonObject, which imports this module). */
type JsonObject = { [key: string]: unknown };

const TLS_SOCKET_NAME = 'envoy.transport_sockets.tls';
const TLS_PACKAGE = 'envoy.extensions.transport_sockets.tls.v3';

export interface UpstreamTlsOptions {
  /** The instance whose CA certificates verify the server (required by gRPC). */
  caInstance: string;
  /** The instance with the client's own certificate: mTLS. Default: none (TLS only). */
  identityInstance?: string;
  /**
   * `match_subject_alt_names`: StringMatcher JSON, e.g. `{ exact: 'spiffe://x/server' }` or
   * `{ prefix: 'spiffe://x/', ignore_case: true }`. Default: none (any SAN).
   */
  subjectAltNames?: readonly JsonObject[];
  /** gRFC A101: the SNI to send. Default: none. */
  sni?: string;
  /** A101: send the endpoint's hostname as the SNI (before `sni`). */
  autoHostSni?: boolean;
  /** A101: check the server certificate's DNS SANs against the SNI sent. */
  autoSniSanValidation?: boolean;
}

/** A Cluster's `transport_socket` with an UpstreamTlsContext. */
export function upstreamTlsTransportSocket(options: UpstreamTlsOptions): JsonObject {
  const common: JsonObject = {
    validation_context: {
      ca_certificate_provider_instance: { instance_name: options.caInstance },
      ...(options.subjectAltNames
        ? { match_subject_alt_names: options.subjectAltNames.map((m) => ({ ...m })) }
        : {}),
    },
  };
  if (options.identityInstance !== undefined) {
    common['tls_certificate_provider_instance'] = { instance_name: options.identityInstance };
  }
  return {
    name: TLS_SOCKET_NAME,
    typed_config: {
      '@type': `${TYPE_URL_PREFIX}${TLS_PACKAGE}.UpstreamTlsContext`,
      common_tls_context: common,
      ...(options.sni !== undefined ? { sni: options.sni } : {}),
      ...(options.autoHostSni ? { auto_host_sni: true } : {}),
      ...(options.autoSniSanValidation ? { auto_sni_san_validation: true } : {}),
    },
  };
}

export interface DownstreamTlsOptions {
  /** The instance with the server's certificate (required by gRPC). */
  identityInstance: string;
  /** The instance whose CA certificates verify clients: the server asks for one. */
  caInstance?: string;
  /** Refuse clients without a valid certificate (needs `caInstance`). Default false. */
  requireClientCertificate?: boolean;
}

/** A server Listener filter chain's `transport_socket` with a DownstreamTlsContext. */
export function downstreamTlsTransportSocket(options: DownstreamTlsOptions): JsonObject {
  const common: JsonObject = {
    tls_certificate_provider_instance: { instance_name: options.identityInstance },
  };
  if (options.caInstance !== undefined) {
    common['validation_context'] = {
      ca_certificate_provider_instance: { instance_name: options.caInstance },
    };
  }
  return {
    name: TLS_SOCKET_NAME,
    typed_config: {
      '@type': `${TYPE_URL_PREFIX}${TLS_PACKAGE}.DownstreamTlsContext`,
      common_tls_context: common,
      ...(options.requireClientCertificate ? { require_client_certificate: true } : {}),
    },
  };
}
