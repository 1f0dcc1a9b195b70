// A CommonTlsContext (gRFC A29), the part of TLS settings a Cluster's UpstreamTlsContext
// (cluster/security.ts) and a server filter chain's DownstreamTlsContext
// (listener/downstream-tls.ts) share: certificates come from the bootstrap's certificate
// provider instances. Anything gRPC cannot honour is rejected rather than ignored, because
// ignoring a security setting would silently weaken the connection.
import type {
  CertificateProviderPluginInstance,
  CertificateValidationContext,
  CommonTlsContext,
  CommonTlsContext_CombinedCertificateValidationContext,
  StringMatcher,
} from '../generated/protos';
import type { ValidationErrors } from '../validation-errors';
import type {
  CertificateProviderInstance,
  SubjectAltNameMatcher,
  UpstreamTlsConfig,
} from './cluster/update';
import type { DecodeContext } from './resource-type';
import { compileSafeRegex } from './safe-regex';

const NOT_SUPPORTED = 'field not supported';

/** The bootstrap's instances, when the decoder was told them (names are checked then). */
export type ProviderNames = DecodeContext['certificateProviders'];

/**
 * The identity provider of a CommonTlsContext (undefined when unset or invalid), with the
 * checks both sides share: fields that would change the handshake in ways gRPC cannot honour,
 * and identities given any way other than a provider instance (using none instead would turn
 * the intended mTLS into server-only TLS).
 */
export function identityProvider(
  common: CommonTlsContext,
  errors: ValidationErrors,
  providers: ProviderNames,
): CertificateProviderInstance | undefined {
  if (common.customHandshaker !== null) errors.addAt('custom_handshaker', NOT_SUPPORTED);
  if (common.tlsParams !== null) errors.addAt('tls_params', NOT_SUPPORTED);
  const identity = common.tlsCertificateProviderInstance;
  if (identity !== null) {
    return errors.field('tls_certificate_provider_instance', () =>
      providerInstance(identity, errors, providers),
    );
  }
  // The deprecated pre-A29 field, still read by C-core and grpc-go: control planes written
  // before A29 send it.
  const legacy = common.tlsCertificateCertificateProviderInstance;
  if (legacy !== null) {
    return errors.field('tls_certificate_certificate_provider_instance', () =>
      providerInstance(legacy, errors, providers),
    );
  }
  if (common.tlsCertificates.length > 0) errors.addAt('tls_certificates', NOT_SUPPORTED);
  if (common.tlsCertificateSdsSecretConfigs.length > 0) {
    errors.addAt('tls_certificate_sds_secret_configs', NOT_SUPPORTED);
  }
  return undefined;
}

/**
 * How the peer's certificate is verified: the `validation_context_type` oneof, validated.
 * Undefined when the oneof is unset (no error: the caller decides whether that is allowed) or
 * after recording errors.
 */
export function peerValidation(
  common: CommonTlsContext,
  errors: ValidationErrors,
  providers: ProviderNames,
  side: 'client' | 'server',
): Validation | undefined {
  switch (common.validationContextType) {
    case 'validationContext':
      return errors.field('validation_context', () =>
        validationContext(common.validationContext!, errors, providers, side, false),
      );
    case 'combinedValidationContext':
      return errors.field('combined_validation_context', () =>
        combinedValidation(common.combinedValidationContext!, errors, providers, side),
      );
    case 'validationContextSdsSecretConfig':
      errors.addAt('validation_context_sds_secret_config', NOT_SUPPORTED);
      return undefined;
    case 'validationContextCertificateProviderInstance':
      // The deprecated pre-A29 oneof member: grpc-go reads it, C-core ignores it and grpc-java
      // rejects it. Only its form inside combined_validation_context is read by every peer.
      errors.addAt('validation_context_certificate_provider_instance', NOT_SUPPORTED);
      return undefined;
    default:
      return undefined;
  }
}

/**
 * A CombinedCertificateValidationContext: its default context, whose CA may instead come from
 * the deprecated `validation_context_certificate_provider_instance` beside it (A29 keeps that
 * for backward compatibility; C-core and grpc-go read it when the default context has no CA).
 */
function combinedValidation(
  combined: CommonTlsContext_CombinedCertificateValidationContext,
  errors: ValidationErrors,
  providers: ProviderNames,
  side: 'client' | 'server',
): Validation | undefined {
  const before = errors.count;
  const legacy = combined.validationContextCertificateProviderInstance;
  const context = combined.defaultValidationContext;
  if (context === null && legacy === null) {
    errors.addAt('default_validation_context', 'field not present');
    return undefined;
  }
  const validation =
    context === null
      ? NO_VALIDATION
      : errors.field('default_validation_context', () =>
          validationContext(context, errors, providers, side, legacy !== null),
        );
  if (validation === undefined || validation.rootCertificateProvider !== undefined) {
    return validation;
  }
  const legacyCa =
    legacy &&
    errors.field('validation_context_certificate_provider_instance', () =>
      providerInstance(legacy, errors, providers),
    );
  if (errors.count !== before) return undefined;
  return legacyCa ? { ...validation, rootCertificateProvider: legacyCa } : validation;
}

export type Validation = Omit<UpstreamTlsConfig, 'identityCertificateProvider'>;

const NO_VALIDATION: Validation = Object.freeze({
  rootCertificateProvider: undefined,
  useSystemRootCerts: false,
  subjectAltNameMatchers: Object.freeze([]),
});

/**
 * A CertificateValidationContext (A29). On a server, SAN matchers and the system's roots are
 * refused: A29 lets a server NACK the first, and a server verifying clients against the Web PKI
 * is almost surely a mistake.
 */
function validationContext(
  context: CertificateValidationContext,
  errors: ValidationErrors,
  providers: ProviderNames,
  side: 'client' | 'server',
  hasLegacyCa: boolean,
): Validation | undefined {
  const before = errors.count;
  // Each of these asks for a check gRPC does not implement; dropping it would accept peers the
  // control plane meant to refuse.
  if (context.verifyCertificateSpki.length > 0)
    errors.addAt('verify_certificate_spki', NOT_SUPPORTED);
  if (context.verifyCertificateHash.length > 0)
    errors.addAt('verify_certificate_hash', NOT_SUPPORTED);
  if (context.requireSignedCertificateTimestamp?.value === true) {
    errors.addAt('require_signed_certificate_timestamp', NOT_SUPPORTED);
  }
  if (context.crl !== null) errors.addAt('crl', NOT_SUPPORTED);
  if (context.customValidatorConfig !== null)
    errors.addAt('custom_validator_config', NOT_SUPPORTED);
  if (context.matchTypedSubjectAltNames.length > 0) {
    errors.addAt('match_typed_subject_alt_names', NOT_SUPPORTED);
  }
  if (side === 'server' && context.matchSubjectAltNames.length > 0) {
    errors.addAt('match_subject_alt_names', 'not supported on servers');
  }

  let rootCertificateProvider: CertificateProviderInstance | undefined;
  let useSystemRootCerts = false;
  const ca = context.caCertificateProviderInstance;
  if (ca !== null) {
    rootCertificateProvider = errors.field('ca_certificate_provider_instance', () =>
      providerInstance(ca, errors, providers),
    );
  } else if (context.systemRootCerts !== null && side === 'server') {
    errors.addAt('system_root_certs', 'not supported on servers');
  } else if (context.systemRootCerts !== null) {
    useSystemRootCerts = true;
  } else if (side === 'client' && !hasLegacyCa) {
    // A client must verify the server. A server without a CA asks for no client certificate:
    // plain server-side TLS (A29); downstream-tls.ts refuses it if one is required.
    errors.addAt('ca_certificate_provider_instance', 'field not present');
  }

  const matchers: SubjectAltNameMatcher[] = [];
  errors.field('match_subject_alt_names', () => {
    context.matchSubjectAltNames.forEach((matcher, i) => {
      const parsed = errors.index(i, () => sanMatcher(matcher, errors));
      if (parsed !== undefined) matchers.push(parsed);
    });
  });
  if (errors.count !== before) return undefined;
  return {
    rootCertificateProvider,
    useSystemRootCerts,
    subjectAltNameMatchers: Object.freeze(matchers),
  };
}

function providerInstance(
  instance: CertificateProviderPluginInstance,
  errors: ValidationErrors,
  providers: ProviderNames,
): CertificateProviderInstance | undefined {
  if (instance.instanceName === '') {
    errors.addAt('instance_name', 'must be non-empty');
    return undefined;
  }
  // A29: an instance the bootstrap does not configure NACKs the resource.
  if (providers !== undefined && !providers.has(instance.instanceName)) {
    errors.addAt(
      'instance_name',
      `"${instance.instanceName}" is not in the bootstrap's certificate_providers`,
    );
    return undefined;
  }
  return Object.freeze({
    instanceName: instance.instanceName,
    certificateName: instance.certificateName,
  });
}

function sanMatcher(
  matcher: StringMatcher,
  errors: ValidationErrors,
): SubjectAltNameMatcher | undefined {
  const ignoreCase = matcher.ignoreCase;
  switch (matcher.matchPattern) {
    case 'exact':
      return Object.freeze({ type: 'exact', value: matcher.exact!, ignoreCase });
    case 'prefix':
    case 'suffix':
    case 'contains': {
      const type = matcher.matchPattern;
      const value = matcher[type]!;
      // An empty prefix, suffix or substring matches every SAN: almost surely a mistake.
      if (value === '') {
        errors.addAt(type, 'must be non-empty');
        return undefined;
      }
      return Object.freeze({ type, value, ignoreCase });
    }
    case 'safeRegex': {
      // RE2, as every gRPC matches SAN regexes (A29); the same check as route regexes.
      const regex = matcher.safeRegex!.regex;
      const compiled = compileSafeRegex(regex);
      if ('error' in compiled) {
        errors.field('safe_regex', () => errors.addAt('regex', `invalid regex: ${compiled.error}`));
        return undefined;
      }
      return Object.freeze({ type: 'safe_regex', regex, ignoreCase });
    }
    default:
      errors.addAt('match_pattern', 'field not present');
      return undefined;
  }
}
