// A CommonTlsContext (gRFC A29), the part of TLS settings a Cluster's UpstreamTlsContext
// (cluster/security.ts) and a server filter chain's DownstreamTlsContext
// (listener/downstream-tls.ts) share: certificates come from the bootstrap's certificate
// provider instances. Anything gRPC cannot honour is rejected rather than ignored, because
// ignoring a security setting would silently weaken the connection.
import type {
  CertificateProviderPluginInstance,
  CertificateValidationContext,
  CommonTlsContext,
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
  if (common.tlsCertificates.length > 0) errors.addAt('tls_certificates', NOT_SUPPORTED);
  if (common.tlsCertificateSdsSecretConfigs.length > 0) {
    errors.addAt('tls_certificate_sds_secret_configs', NOT_SUPPORTED);
  }
  return undefined;
}

/**
 * The CertificateValidationContext of the `validation_context_type` oneof and its field path,
 * or undefined when unset or given in a way gRPC does not support (then an error is recorded).
 */
export function validationContextOf(
  common: CommonTlsContext,
  errors: ValidationErrors,
): { readonly path: string; readonly value: CertificateValidationContext } | undefined {
  switch (common.validationContextType) {
    case 'validationContext':
      return { path: 'validation_context', value: common.validationContext! };
    case 'combinedValidationContext': {
      const context = common.combinedValidationContext!.defaultValidationContext;
      if (context === null) {
        errors.field('combined_validation_context', () =>
          errors.addAt('default_validation_context', 'field not present'),
        );
        return undefined;
      }
      return { path: 'combined_validation_context.default_validation_context', value: context };
    }
    case 'validationContextSdsSecretConfig':
      errors.addAt('validation_context_sds_secret_config', NOT_SUPPORTED);
      return undefined;
    case 'validationContextCertificateProviderInstance':
      // The deprecated pre-A29 field; grpc-go still reads it, we do not (see the docs).
      errors.addAt('validation_context_certificate_provider_instance', NOT_SUPPORTED);
      return undefined;
    default:
      return undefined;
  }
}

export type Validation = Omit<UpstreamTlsConfig, 'identityCertificateProvider'>;

/**
 * A CertificateValidationContext (A29). On a server, SAN matchers and the system's roots are
 * refused: A29 lets a server NACK the first, and a server verifying clients against the Web PKI
 * is almost surely a mistake.
 */
export function validationContext(
  context: CertificateValidationContext,
  errors: ValidationErrors,
  providers: ProviderNames,
  side: 'client' | 'server',
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
  } else if (side === 'client') {
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
