// What a subchannel of a cluster with an UpstreamTlsContext carries in its options (gRFC A29):
// the cluster's TLS settings with the bootstrap's provider configs resolved, as plain JSON.
// The providers themselves are leased by the subchannel's connector (xds-credentials.ts) for as
// long as it lives, so a cluster's certificates are read only while something connects with them.
import type { CertificateProviderConfig } from '../../bootstrap';
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
    }
  /** The settings cannot be used: connections fail with this message. */
  | { readonly cluster: string; readonly error: string };

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
  });
}
