// A server Listener filter chain's transport_socket (gRFC A29): a DownstreamTlsContext with
// certificate provider instances, and each rule that NACKs it, at its field path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CertificateProviderConfig } from '../../lib/bootstrap';
import { listenerResourceType, type ListenerUpdate } from '../../lib/resources/listener';
import type { DecodeResult } from '../../lib/resources/resource-type';
import { encodeListener, HCM_TYPE_URL, hcmFields } from './fixtures/listener-fixtures';
import { SERVER, errorsOf, resourceOf, type Obj } from './fixtures/route-fixtures';

const DOWNSTREAM =
  'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const PROVIDER: CertificateProviderConfig = {
  pluginName: 'file_watcher',
  config: {
    certificateFile: 'c.pem',
    privateKeyFile: 'k.pem',
    caCertificateFile: 'ca.pem',
    refreshIntervalMs: 1000,
  },
};
const PROVIDERS = new Map([
  ['id', PROVIDER],
  ['roots', PROVIDER],
]);
const PATH = 'filter_chains[0].transport_socket';
const CONTEXT_PATH = `${PATH}.typed_config`;
const NO_CLIENT_CA = 'is true but no ca_certificate_provider_instance verifies client certificates';

function decode(socket: Obj | undefined, providers = PROVIDERS): DecodeResult<ListenerUpdate> {
  const chain: Obj = {
    filters: [{ name: 'hcm', typedConfig: { '@type': HCM_TYPE_URL, ...hcmFields({}) } }],
    ...(socket ? { transportSocket: socket } : {}),
  };
  const listener = {
    name: 'grpc/server?xds.resource.listening_address=127.0.0.1:8080',
    address: { socketAddress: { address: '127.0.0.1', portValue: 8080 } },
    filterChains: [chain],
  };
  return listenerResourceType.decode(encodeListener(listener), {
    server: SERVER,
    certificateProviders: providers,
  });
}

/** A TLS transport socket whose DownstreamTlsContext has these fields. */
function tls(context: Obj, name = 'envoy.transport_sockets.tls'): Obj {
  return { name, typedConfig: { '@type': DOWNSTREAM, ...context } };
}

const identity = { tlsCertificateProviderInstance: { instanceName: 'id' } };
const withCa = {
  ...identity,
  validationContext: { caCertificateProviderInstance: { instanceName: 'roots' } },
};

describe('server Listener transport_socket (gRFC A29)', () => {
  it('reads the identity, the CA and require_client_certificate', () => {
    const chain = resourceOf(
      decode(tls({ commonTlsContext: withCa, requireClientCertificate: { value: true } })),
    ).server!.filterChains[0]!;
    assert.deepEqual(chain.security, {
      identityCertificateProvider: { instanceName: 'id', certificateName: '' },
      rootCertificateProvider: { instanceName: 'roots', certificateName: '' },
      requireClientCertificate: true,
    });
  });

  it('a chain without transport_socket has no security (the fallback credentials)', () => {
    assert.equal(resourceOf(decode(undefined)).server!.filterChains[0]!.security, undefined);
  });

  it('TLS without a validation context: no client certificate is asked for', () => {
    const security = resourceOf(decode(tls({ commonTlsContext: identity }))).server!
      .filterChains[0]!.security;
    assert.equal(security?.rootCertificateProvider, undefined);
    assert.equal(security?.requireClientCertificate, false);
  });

  // gRFC A29: the server needs only its identity; a CA is needed only to verify clients. C-core
  // and grpc-go accept these (issue 20).
  const withoutClientCa: [string, Obj][] = [
    ['an empty validation context', { ...identity, validationContext: {} }],
    [
      'an empty combined validation context',
      { ...identity, combinedValidationContext: { defaultValidationContext: {} } },
    ],
  ];
  for (const [what, commonTlsContext] of withoutClientCa) {
    it(`TLS with ${what} and require_client_certificate unset: plain server-side TLS`, () => {
      const security = resourceOf(decode(tls({ commonTlsContext }))).server!.filterChains[0]!
        .security;
      assert.deepEqual(security, {
        identityCertificateProvider: { instanceName: 'id', certificateName: '' },
        rootCertificateProvider: undefined,
        requireClientCertificate: false,
      });
    });
  }

  it('reads the deprecated identity and combined CA provider instances (A29, as C-core and grpc-go)', () => {
    const chain = resourceOf(
      decode(
        tls({
          commonTlsContext: {
            tlsCertificateCertificateProviderInstance: { instanceName: 'id' },
            combinedValidationContext: {
              validationContextCertificateProviderInstance: { instanceName: 'roots' },
            },
          },
          requireClientCertificate: { value: true },
        }),
      ),
    ).server!.filterChains[0]!;
    assert.deepEqual(chain.security, {
      identityCertificateProvider: { instanceName: 'id', certificateName: '' },
      rootCertificateProvider: { instanceName: 'roots', certificateName: '' },
      requireClientCertificate: true,
    });
  });

  const nacks: [string, Obj, string][] = [
    [
      'another transport socket',
      tls({ commonTlsContext: identity }, 'raw_buffer'),
      `${PATH}.name: unsupported value "raw_buffer": must be envoy.transport_sockets.tls`,
    ],
    [
      'no typed_config',
      { name: 'envoy.transport_sockets.tls' },
      `${PATH}.typed_config: field not present`,
    ],
    [
      'another type',
      {
        name: 'envoy.transport_sockets.tls',
        typedConfig: {
          '@type':
            'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
        },
      },
      `${CONTEXT_PATH}.type_url: unsupported value type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext`,
    ],
    ['no common_tls_context', tls({}), `${CONTEXT_PATH}.common_tls_context: field not present`],
    [
      'no identity',
      tls({ commonTlsContext: { validationContext: withCa.validationContext } }),
      `${CONTEXT_PATH}.common_tls_context.tls_certificate_provider_instance: field not present`,
    ],
    [
      'an identity instance the bootstrap lacks',
      tls({ commonTlsContext: { tlsCertificateProviderInstance: { instanceName: 'nope' } } }),
      `${CONTEXT_PATH}.common_tls_context.tls_certificate_provider_instance.instance_name: "nope" is not in the bootstrap's certificate_providers`,
    ],
    [
      'a CA instance the bootstrap lacks',
      tls({
        commonTlsContext: {
          ...identity,
          validationContext: { caCertificateProviderInstance: { instanceName: 'nope' } },
        },
      }),
      `${CONTEXT_PATH}.common_tls_context.validation_context.ca_certificate_provider_instance.instance_name: "nope" is not in the bootstrap's certificate_providers`,
    ],
    [
      'require_client_certificate without a validation context',
      tls({ commonTlsContext: identity, requireClientCertificate: { value: true } }),
      `${CONTEXT_PATH}.require_client_certificate: ${NO_CLIENT_CA}`,
    ],
    [
      'require_client_certificate with a validation context without a CA',
      tls({
        commonTlsContext: { ...identity, validationContext: {} },
        requireClientCertificate: { value: true },
      }),
      `${CONTEXT_PATH}.require_client_certificate: ${NO_CLIENT_CA}`,
    ],
    [
      'require_sni',
      tls({ commonTlsContext: identity, requireSni: { value: true } }),
      `${CONTEXT_PATH}.require_sni: must not be true`,
    ],
    [
      'a strict OCSP staple policy',
      tls({ commonTlsContext: identity, ocspStaplePolicy: 'STRICT_STAPLING' }),
      `${CONTEXT_PATH}.ocsp_staple_policy: only LENIENT_STAPLING is supported`,
    ],
    [
      'tls_params',
      tls({ commonTlsContext: { ...identity, tlsParams: { cipherSuites: ['x'] } } }),
      `${CONTEXT_PATH}.common_tls_context.tls_params: field not supported`,
    ],
    [
      'SAN matchers (client side only)',
      tls({
        commonTlsContext: {
          ...identity,
          validationContext: {
            ...withCa.validationContext,
            matchSubjectAltNames: [{ exact: 'a' }],
          },
        },
      }),
      `${CONTEXT_PATH}.common_tls_context.validation_context.match_subject_alt_names: not supported on servers`,
    ],
    [
      'the system root certificates',
      tls({ commonTlsContext: { ...identity, validationContext: { systemRootCerts: {} } } }),
      `${CONTEXT_PATH}.common_tls_context.validation_context.system_root_certs: not supported on servers`,
    ],
    [
      'an SDS validation context',
      tls({ commonTlsContext: { ...identity, validationContextSdsSecretConfig: { name: 'x' } } }),
      `${CONTEXT_PATH}.common_tls_context.validation_context_sds_secret_config: field not supported`,
    ],
    [
      'a custom handshaker',
      tls({ commonTlsContext: { ...identity, customHandshaker: { name: 'x' } } }),
      `${CONTEXT_PATH}.common_tls_context.custom_handshaker: field not supported`,
    ],
  ];
  for (const [what, socket, error] of nacks) {
    it(`NACKs ${what}`, () => {
      assert.deepEqual(errorsOf(decode(socket)), [error]);
    });
  }

  it('without the bootstrap in the decode context, instance names are not checked', () => {
    const result = listenerResourceType.decode(
      encodeListener({
        name: 'l',
        address: { socketAddress: { address: '127.0.0.1', portValue: 1 } },
        filterChains: [
          {
            filters: [{ name: 'hcm', typedConfig: { '@type': HCM_TYPE_URL, ...hcmFields({}) } }],
            transportSocket: tls({
              commonTlsContext: { tlsCertificateProviderInstance: { instanceName: 'any' } },
            }),
          },
        ],
      }),
      { server: SERVER },
    );
    assert.equal(
      resourceOf(result).server!.filterChains[0]!.security?.identityCertificateProvider
        .instanceName,
      'any',
    );
  });
});
