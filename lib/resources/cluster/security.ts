// `transport_socket` (gRFC A29, A86): an UpstreamTlsContext whose certificates come from
// certificate provider instances, or an Http11ProxyUpstreamTransport (HTTP CONNECT through the
// proxy each endpoint's metadata names) wrapping nothing or such an UpstreamTlsContext. Anything
// gRPC cannot honour is rejected rather than ignored, because ignoring a security setting would
// silently weaken the connection.
import type { CommonTlsContext, TransportSocket } from '../../generated/protos';
import type { ValidationErrors } from '../../validation-errors';
import { decodeAnyValue, readTypedConfig, typeUrlOf } from '../any';
import { identityProvider, peerValidation, type ProviderNames } from '../common-tls-context';
import type { UpstreamTlsConfig } from './update';

const MAX_SNI_BYTES = 255;

const HTTP_11_PROXY =
  'envoy.extensions.transport_sockets.http_11_proxy.v3.Http11ProxyUpstreamTransport';
const HTTP_11_PROXY_URL = typeUrlOf(HTTP_11_PROXY);

/** What a Cluster's transport_socket asks for. */
export interface UpstreamTransport {
  /** Undefined: no TLS. */
  readonly security: UpstreamTlsConfig | undefined;
  /** A86: connect through each endpoint's HTTP CONNECT proxy, when it names one. */
  readonly httpConnect: boolean;
}

/** The cluster's transport socket (at the current path), or undefined after recording errors. */
export function upstreamTransport(
  socket: TransportSocket,
  errors: ValidationErrors,
  providers: ProviderNames,
): UpstreamTransport | undefined {
  const typed = socket.typedConfig;
  if (typed?.type_url !== HTTP_11_PROXY_URL) {
    const security = upstreamTls(socket, errors, providers);
    return security && { security, httpConnect: false };
  }
  return errors.field('typed_config', () => {
    const proxy = decodeAnyValue(HTTP_11_PROXY, typed, errors);
    if (proxy === undefined) return undefined;
    // A86: the wrapped socket is unset (plaintext in the tunnel) or an UpstreamTlsContext,
    // validated exactly as it would be in the Cluster's own transport_socket.
    const inner = proxy.transportSocket;
    if (inner === null) return { security: undefined, httpConnect: true };
    const security = errors.field('transport_socket', () => upstreamTls(inner, errors, providers));
    return security && { security, httpConnect: true };
  });
}

/** The TLS settings, or undefined after recording errors. */
export function upstreamTls(
  socket: TransportSocket,
  errors: ValidationErrors,
  providers: ProviderNames,
): UpstreamTlsConfig | undefined {
  return readTypedConfig(
    socket.typedConfig,
    'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
    errors,
    (context) => {
      const before = errors.count;
      // A101, as Envoy: an SNI is a DNS name, at most 255 bytes.
      if (Buffer.byteLength(context.sni) > MAX_SNI_BYTES) {
        errors.addAt('sni', `must be at most ${MAX_SNI_BYTES} bytes`);
      }
      const common = context.commonTlsContext;
      if (common === null) {
        errors.addAt('common_tls_context', 'field not present');
        return undefined;
      }
      const config = errors.field('common_tls_context', () =>
        commonTlsContext(common, errors, providers),
      );
      if (config === undefined || errors.count !== before) return undefined;
      return Object.freeze({
        ...config,
        ...(context.sni !== '' ? { sni: context.sni } : {}),
        ...(context.autoHostSni ? { autoHostSni: true as const } : {}),
        ...(context.autoSniSanValidation ? { autoSniSanValidation: true as const } : {}),
      });
    },
  );
}

function commonTlsContext(
  common: CommonTlsContext,
  errors: ValidationErrors,
  providers: ProviderNames,
): UpstreamTlsConfig | undefined {
  const before = errors.count;
  const identityCertificateProvider = identityProvider(common, errors, providers);
  // A client must be able to verify the server: no CA means no TLS. Reported unless the
  // oneof held something refused (its own error says why).
  if (common.validationContextType === undefined) {
    errors.addAt('validation_context', 'field not present');
  }
  const validation = peerValidation(common, errors, providers, 'client');
  if (errors.count !== before || validation === undefined) return undefined;
  return Object.freeze({ ...validation, identityCertificateProvider });
}
