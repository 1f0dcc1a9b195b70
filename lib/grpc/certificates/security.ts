// What a subchannel of a cluster with an UpstreamTlsContext carries in its options (gRFC A29):
// the cluster's TLS settings with the bootstrap's provider configs resolved, as plain JSON.
// The providers themselves are leased by the subchannel's connector (xds-credentials.ts) for as
// long as it lives, so a cluster's certificates are read only while something connects with them.
import type { experimental } from '@grpc/grpc-js';
import type { CertificateProviderConfig } from '../../bootstrap';
import { ENDPOINT_HOSTNAME_OPTION, SECURITY_OPTION } from '../names';
import { hostnameOf, hostWithoutPort } from '../lb/common/endpoint-hostname';
import type { SubjectAltNameMatcher, UpstreamTlsConfig } from '../../resources/cluster';

export interface ProviderRef {
  /** The bootstrap instance name (for logs). */
  readonly name: string;
  readonly config: CertificateProviderConfig;
}

export type SubchannelSecurity =
  | {
      readonly cluster: string;
      /** Where the CA certificates come from: an instance, or the system's roots. */
      readonly ca: ProviderRef | 'system';
      /** Our certificate, for mTLS. */
      readonly identity: ProviderRef | undefined;
      readonly subjectAltNameMatchers: readonly SubjectAltNameMatcher[];
      /** gRFC A101's settings, as the cluster gives them. */
      readonly sni: string | undefined;
      readonly autoHostSni: boolean;
      readonly autoSniSanValidation: boolean;
    }
  /** The settings cannot be used: connections fail with this message. */
  | { readonly cluster: string; readonly error: string };

/**
 * The options of a subchannel of a cluster with TLS settings: the settings, and the endpoint's
 * hostname when `auto_host_sni` will send it (see names.ts).
 */
export function securityOptions(
  security: SubchannelSecurity,
  address: experimental.SubchannelAddress,
): Record<string, unknown> {
  const hostname = 'error' in security || !security.autoHostSni ? undefined : sniHostOf(address);
  return {
    [SECURITY_OPTION]: security,
    ...(hostname ? { [ENDPOINT_HOSTNAME_OPTION]: hostname } : {}),
  };
}

/** The subchannel option for a cluster's TLS settings (see names.ts SECURITY_OPTION). */
export function subchannelSecurity(
  cluster: string,
  tls: UpstreamTlsConfig,
  providers: ReadonlyMap<string, CertificateProviderConfig> | undefined,
): SubchannelSecurity {
  const missing: string[] = [];
  const ref = (name: string): ProviderRef | undefined => {
    const config = providers?.get(name);
    if (!config) missing.push(name);
    return config && { name, config };
  };
  const root = tls.rootCertificateProvider;
  const ca = root ? ref(root.instanceName) : 'system';
  const identityName = tls.identityCertificateProvider?.instanceName;
  const identity = identityName === undefined ? undefined : ref(identityName);
  // Validation NACKs such a Cluster; this is for a configuration that came another way.
  if (missing.length > 0 || ca === undefined) {
    return Object.freeze({
      cluster,
      error: `cluster "${cluster}": certificate provider instance ${missing.map((m) => `"${m}"`).join(', ')} is not in the bootstrap`,
    });
  }
  return Object.freeze({
    cluster,
    ca,
    identity,
    subjectAltNameMatchers: tls.subjectAltNameMatchers,
    sni: tls.sni,
    autoHostSni: tls.autoHostSni === true,
    autoSniSanValidation: tls.autoSniSanValidation === true,
  });
}

/**
 * The SNI a connection sends (gRFC A101): the endpoint's hostname when `auto_host_sni` is set
 * and there is one, else `sni` when not empty, else none.
 */
export function sniFor(
  security: { readonly sni: string | undefined; readonly autoHostSni: boolean },
  endpointHostname: string | undefined,
): string | undefined {
  if (security.autoHostSni && endpointHostname) return endpointHostname;
  return security.sni || undefined;
}

/** A101: the host auto_host_sni sends, the marked hostname without a logical DNS name's port. */
function sniHostOf(address: experimental.SubchannelAddress): string | undefined {
  const hostname = hostnameOf(address);
  return hostname === undefined ? undefined : hostWithoutPort(hostname);
}
