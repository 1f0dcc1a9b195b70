// Cluster outlier_detection (gRFC A50) and transport_socket (gRFC A29 UpstreamTlsContext).
//   1. Build an EDS cluster fixture with the field under test.
//   2. Decode it, and compare `outlierDetection` / `security` or the exact errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CertificateProviderConfig } from '../../lib/bootstrap';
import { clusterResourceType } from '../../lib/resources/cluster';
import {
  SERVER,
  caContext,
  clusterErrors,
  edsCluster,
  encodeCluster,
  rawAny,
  tlsSocket,
  validCluster,
} from './fixtures/cluster-fixtures';

const outlierOf = (od: Record<string, unknown>) =>
  validCluster(edsCluster({ outlierDetection: od })).outlierDetection;
const securityOf = (common: Record<string, unknown>) =>
  validCluster(edsCluster({ transportSocket: tlsSocket(common) })).security;
const tlsErrors = (common: Record<string, unknown> | undefined) =>
  clusterErrors(edsCluster({ transportSocket: tlsSocket(common) }));

const DEFAULT_SUCCESS_RATE = {
  stdevFactor: 1900,
  enforcementPercentage: 100,
  minimumHosts: 5,
  requestVolume: 100,
};
const CTX = 'transport_socket.typed_config.common_tls_context';
const VC = `${CTX}.validation_context`;

describe('Cluster outlier_detection (A50)', () => {
  it('fills in every default for an empty message', () => {
    assert.deepStrictEqual(outlierOf({}), {
      intervalMs: 10000,
      baseEjectionTimeMs: 30000,
      maxEjectionTimeMs: 300000,
      maxEjectionPercent: 10,
      successRateEjection: DEFAULT_SUCCESS_RATE,
      failurePercentageEjection: undefined,
    });
  });

  it('converts durations to milliseconds and reads every field', () => {
    const od = outlierOf({
      interval: { seconds: 1, nanos: 500_000_000 },
      baseEjectionTime: { seconds: 2 },
      maxEjectionTime: { seconds: 3 },
      maxEjectionPercent: { value: 100 },
      enforcingSuccessRate: { value: 0 },
      successRateStdevFactor: { value: 1 },
      enforcingFailurePercentage: { value: 50 },
      failurePercentageThreshold: { value: 90 },
      failurePercentageMinimumHosts: { value: 3 },
      failurePercentageRequestVolume: { value: 20 },
    });
    assert.deepStrictEqual(od, {
      intervalMs: 1500,
      baseEjectionTimeMs: 2000,
      maxEjectionTimeMs: 3000,
      maxEjectionPercent: 100,
      successRateEjection: undefined,
      failurePercentageEjection: {
        threshold: 90,
        enforcementPercentage: 50,
        minimumHosts: 3,
        requestVolume: 20,
      },
    });
  });

  it('rejects negative or malformed durations', () => {
    const json = edsCluster({
      outlierDetection: { interval: { seconds: -1 }, baseEjectionTime: { nanos: 1_000_000_000 } },
    });
    assert.deepStrictEqual(clusterErrors(json), [
      'outlier_detection.interval.seconds: must be in range [0, 315576000000]',
      'outlier_detection.base_ejection_time.nanos: must be in range [0, 999999999]',
    ]);
  });

  it('rejects percentages above 100, even for a disabled ejection kind', () => {
    const json = edsCluster({
      outlierDetection: {
        maxEjectionPercent: { value: 101 },
        enforcingSuccessRate: { value: 101 },
        failurePercentageThreshold: { value: 101 },
        enforcingFailurePercentage: { value: 101 },
      },
    });
    assert.deepStrictEqual(clusterErrors(json), [
      'outlier_detection.max_ejection_percent: must be in range [0, 100]',
      'outlier_detection.enforcing_success_rate: must be in range [0, 100]',
      'outlier_detection.failure_percentage_threshold: must be in range [0, 100]',
      'outlier_detection.enforcing_failure_percentage: must be in range [0, 100]',
    ]);
  });
});

describe('Cluster transport_socket (A29)', () => {
  it('records the CA and identity providers and SAN matchers', () => {
    const security = securityOf({
      tlsCertificateProviderInstance: { instanceName: 'identity', certificateName: 'cert' },
      ...caContext({
        matchSubjectAltNames: [
          { exact: 'a.example.com' },
          { suffix: '.example.com', ignoreCase: true },
          { safeRegex: { regex: '^spiffe://.*$' } },
        ],
      }),
    });
    assert.deepStrictEqual(security, {
      rootCertificateProvider: { instanceName: 'roots', certificateName: 'ca' },
      useSystemRootCerts: false,
      identityCertificateProvider: { instanceName: 'identity', certificateName: 'cert' },
      subjectAltNameMatchers: [
        { type: 'exact', value: 'a.example.com', ignoreCase: false },
        { type: 'suffix', value: '.example.com', ignoreCase: true },
        { type: 'safe_regex', regex: '^spiffe://.*$', ignoreCase: false },
      ],
    });
  });

  it('accepts system root certs (A82) and a combined validation context', () => {
    assert.deepStrictEqual(securityOf({ validationContext: { systemRootCerts: {} } }), {
      rootCertificateProvider: undefined,
      useSystemRootCerts: true,
      identityCertificateProvider: undefined,
      subjectAltNameMatchers: [],
    });
    const combined = {
      combinedValidationContext: { defaultValidationContext: caContext()['validationContext'] },
    };
    assert.equal(securityOf(combined)?.rootCertificateProvider?.instanceName, 'roots');
  });

  it('rejects a transport socket that is not an UpstreamTlsContext', () => {
    const url = 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer';
    const json = edsCluster({ transportSocket: { name: 'raw', typedConfig: rawAny(url) } });
    assert.deepStrictEqual(clusterErrors(json), [
      `transport_socket.typed_config.type_url: unsupported value ${url}`,
    ]);
  });

  it('reads the A101 SNI fields, and NACKs an sni over 255 bytes', () => {
    const socket = (fields: Record<string, unknown>) => {
      const base = tlsSocket(caContext());
      return { ...base, typedConfig: { ...(base['typedConfig'] as object), ...fields } };
    };
    const sni = validCluster(
      edsCluster({
        transportSocket: socket({
          sni: 'backend.example',
          autoHostSni: true,
          autoSniSanValidation: true,
        }),
      }),
    ).security;
    assert.equal(sni?.sni, 'backend.example');
    assert.equal(sni?.autoHostSni, true);
    assert.equal(sni?.autoSniSanValidation, true);
    const none = validCluster(edsCluster({ transportSocket: socket({}) })).security;
    assert.deepEqual(
      [none?.sni, none?.autoHostSni, none?.autoSniSanValidation],
      [undefined, undefined, undefined],
    );
    assert.ok(validCluster(edsCluster({ transportSocket: socket({ sni: 'a'.repeat(255) }) })));
    assert.deepStrictEqual(
      clusterErrors(edsCluster({ transportSocket: socket({ sni: 'a'.repeat(256) }) })),
      ['transport_socket.typed_config.sni: must be at most 255 bytes'],
    );
  });

  it('requires typed_config and common_tls_context', () => {
    assert.deepStrictEqual(clusterErrors(edsCluster({ transportSocket: { name: 'tls' } })), [
      'transport_socket.typed_config: field not present',
    ]);
    assert.deepStrictEqual(tlsErrors(undefined), [`${CTX}: field not present`]);
  });

  // Unlike a server's chain (server-listener-tls.spec.ts), a client keeps requiring a root of
  // trust: without one it could not verify the server at all (issue 20).
  it('requires a way to validate the server certificate', () => {
    assert.deepStrictEqual(tlsErrors({}), [`${VC}: field not present`]);
    assert.deepStrictEqual(tlsErrors({ validationContext: {} }), [
      `${VC}.ca_certificate_provider_instance: field not present`,
    ]);
    assert.deepStrictEqual(tlsErrors({ combinedValidationContext: {} }), [
      `${CTX}.combined_validation_context.default_validation_context: field not present`,
    ]);
  });

  it('requires provider instance names', () => {
    const json = { validationContext: { caCertificateProviderInstance: { instanceName: '' } } };
    assert.deepStrictEqual(tlsErrors(json), [
      `${VC}.ca_certificate_provider_instance.instance_name: must be non-empty`,
    ]);
  });

  it('rejects certificate sources and checks gRPC does not implement', () => {
    const errors = tlsErrors({
      tlsCertificates: [{}],
      tlsCertificateSdsSecretConfigs: [{ name: 's' }],
      customHandshaker: { name: 'h' },
      ...caContext({
        verifyCertificateSpki: ['x'],
        verifyCertificateHash: ['y'],
        requireSignedCertificateTimestamp: { value: true },
        crl: { inlineString: 'crl' },
        customValidatorConfig: { name: 'v' },
        matchTypedSubjectAltNames: [{ sanType: 'DNS', matcher: { exact: 'a' } }],
      }),
    });
    assert.deepStrictEqual(errors, [
      `${CTX}.custom_handshaker: field not supported`,
      `${CTX}.tls_certificates: field not supported`,
      `${CTX}.tls_certificate_sds_secret_configs: field not supported`,
      `${VC}.verify_certificate_spki: field not supported`,
      `${VC}.verify_certificate_hash: field not supported`,
      `${VC}.require_signed_certificate_timestamp: field not supported`,
      `${VC}.crl: field not supported`,
      `${VC}.custom_validator_config: field not supported`,
      `${VC}.match_typed_subject_alt_names: field not supported`,
    ]);
  });

  // A29 keeps these for control planes written before it; C-core and grpc-go read both.
  it('reads the deprecated identity and combined CA provider instances', () => {
    const security = securityOf({
      tlsCertificateCertificateProviderInstance: { instanceName: 'identity', certificateName: 'c' },
      combinedValidationContext: {
        defaultValidationContext: { matchSubjectAltNames: [{ exact: 'a.example.com' }] },
        validationContextCertificateProviderInstance: {
          instanceName: 'roots',
          certificateName: 'r',
        },
      },
    });
    assert.deepStrictEqual(security, {
      rootCertificateProvider: { instanceName: 'roots', certificateName: 'r' },
      useSystemRootCerts: false,
      identityCertificateProvider: { instanceName: 'identity', certificateName: 'c' },
      subjectAltNameMatchers: [{ type: 'exact', value: 'a.example.com', ignoreCase: false }],
    });
    const onlyLegacyCa = {
      combinedValidationContext: {
        validationContextCertificateProviderInstance: { instanceName: 'r' },
      },
    };
    assert.equal(securityOf(onlyLegacyCa)?.rootCertificateProvider?.instanceName, 'r');
  });

  it('prefers the A29 fields to the deprecated ones when both are set', () => {
    const security = securityOf({
      tlsCertificateProviderInstance: { instanceName: 'new-id' },
      tlsCertificateCertificateProviderInstance: { instanceName: 'old-id' },
      combinedValidationContext: {
        defaultValidationContext: { caCertificateProviderInstance: { instanceName: 'new-ca' } },
        validationContextCertificateProviderInstance: { instanceName: 'old-ca' },
      },
    });
    assert.equal(security?.identityCertificateProvider?.instanceName, 'new-id');
    assert.equal(security?.rootCertificateProvider?.instanceName, 'new-ca');
  });

  it('checks the deprecated instances as the A29 ones', () => {
    const errors = tlsErrors({
      tlsCertificateCertificateProviderInstance: { instanceName: '' },
      combinedValidationContext: {
        validationContextCertificateProviderInstance: { instanceName: '' },
      },
    });
    assert.deepStrictEqual(errors, [
      `${CTX}.tls_certificate_certificate_provider_instance.instance_name: must be non-empty`,
      `${CTX}.combined_validation_context.validation_context_certificate_provider_instance.instance_name: must be non-empty`,
    ]);
  });

  it('rejects SDS and the deprecated provider-instance validation contexts', () => {
    assert.deepStrictEqual(tlsErrors({ validationContextSdsSecretConfig: { name: 's' } }), [
      `${CTX}.validation_context_sds_secret_config: field not supported`,
    ]);
    const deprecated = { validationContextCertificateProviderInstance: { instanceName: 'r' } };
    assert.deepStrictEqual(tlsErrors(deprecated), [
      `${CTX}.validation_context_certificate_provider_instance: field not supported`,
    ]);
  });

  it('checks SAN regexes with RE2: RE2-only syntax passes, lookaround does not', () => {
    const security = securityOf(
      caContext({
        matchSubjectAltNames: [{ safeRegex: { regex: 'spiffe://[[:alnum:].]+/\\Qns/a\\E' } }],
      }),
    );
    assert.deepStrictEqual(security?.subjectAltNameMatchers, [
      { type: 'safe_regex', regex: 'spiffe://[[:alnum:].]+/\\Qns/a\\E', ignoreCase: false },
    ]);
    assert.deepStrictEqual(
      tlsErrors(caContext({ matchSubjectAltNames: [{ safeRegex: { regex: '(?!x).*' } }] })),
      [
        `${VC}.match_subject_alt_names[0].safe_regex.regex: invalid regex: invalid or unsupported Perl syntax: \`(?!\` (RE2 has no lookaround)`,
      ],
    );
  });

  it('rejects SAN matchers that would match everything or cannot compile', () => {
    const errors = tlsErrors(
      caContext({
        matchSubjectAltNames: [{ prefix: '' }, { safeRegex: { regex: '(' } }, { ignoreCase: true }],
      }),
    );
    assert.deepStrictEqual(errors, [
      `${VC}.match_subject_alt_names[0].prefix: must be non-empty`,
      `${VC}.match_subject_alt_names[1].safe_regex.regex: invalid regex: missing closing ): \`(\``,
      `${VC}.match_subject_alt_names[2].match_pattern: field not present`,
    ]);
  });

  it('NACKs provider instances the bootstrap does not configure, and tls_params (A29)', () => {
    const provider: CertificateProviderConfig = {
      pluginName: 'file_watcher',
      config: {
        certificateFile: undefined,
        privateKeyFile: undefined,
        caCertificateFile: 'ca.pem',
        refreshIntervalMs: 1000,
      },
    };
    const decode = (common: Record<string, unknown>) =>
      clusterResourceType.decode(
        encodeCluster(edsCluster({ transportSocket: tlsSocket(common) })),
        { server: SERVER, certificateProviders: new Map([['roots', provider]]) },
      );
    const known = caContext();
    assert.ok('resource' in decode(known));
    const result = decode({
      ...known,
      tlsCertificateProviderInstance: { instanceName: 'mine' },
      tlsParams: { cipherSuites: ['x'] },
    });
    assert.ok('errors' in result);
    assert.deepStrictEqual(
      result.errors.map((e) => `${e.path}: ${e.message}`),
      [
        `${CTX}.tls_params: field not supported`,
        `${CTX}.tls_certificate_provider_instance.instance_name: "mine" is not in the bootstrap's certificate_providers`,
      ],
    );
  });
});
