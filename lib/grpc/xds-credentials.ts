// gRFC A29's credentials, named as in grpc-js-xds so that migrating is mechanical:
// `new XdsChannelCredentials(fallback)` for channels and `new XdsServerCredentials(fallback)` for
// XdsServer. They use the TLS settings the management server sends (a Cluster's
// UpstreamTlsContext, a filter chain's DownstreamTlsContext) with certificates from the
// bootstrap's certificate providers, and the fallback credentials where it sends none.
// Usage: docs/security.md.
import {
  ChannelCredentials,
  ServerCredentials,
  experimental,
  status,
  type CallCredentials,
  type ChannelOptions,
} from '@grpc/grpc-js';
import type { CertificateProviderConfig } from '../bootstrap';
import type { DownstreamTlsConfig } from '../resources/listener';
import { ClusterTlsConnector } from './certificates/cluster-connector';
import { spiffeClientCheck, type SpiffeClientCheck } from './certificates/spiffe-client-check';
import { leaseProvider, systemRootsLease, type ProviderLease } from './certificates/provider-store';
import { sniFor, type SubchannelSecurity } from './certificates/security';
import { failingCallCredentials } from './certificates/connection-security';
import { ENDPOINT_HOSTNAME_OPTION, SECURITY_OPTION } from './names';

type SecureConnector = experimental.SecureConnector;

const INSECURE_FALLBACK_CREDENTIALS = failingCallCredentials(
  status.UNAUTHENTICATED,
  'cannot send call credentials on an insecure connection ' +
    '(the fallback of XdsChannelCredentials, for a cluster without TLS)',
);
/** The target parameter of `_createSecureConnector` (grpc-js's GrpcUri, not exported). */
type ChannelTarget = Parameters<ChannelCredentials['_createSecureConnector']>[0];

/**
 * Channel credentials for `xds:` targets: a subchannel of a cluster with an UpstreamTlsContext
 * connects with TLS (mTLS when the cluster names an identity), the server certificate verified
 * against the cluster's CA and its SAN matchers instead of the hostname; any other connection
 * (a cluster without TLS, a target that is not `xds:`) uses `fallback`.
 */
export class XdsChannelCredentials extends ChannelCredentials {
  constructor(private readonly fallback: ChannelCredentials) {
    super();
  }

  _isSecure(): boolean {
    return true;
  }

  _equals(other: ChannelCredentials): boolean {
    return (
      other === this ||
      (other instanceof XdsChannelCredentials && this.fallback._equals(other.fallback))
    );
  }

  _createSecureConnector(
    target: ChannelTarget,
    options: ChannelOptions,
    callCredentials?: CallCredentials,
  ): SecureConnector {
    const security = options[SECURITY_OPTION] as SubchannelSecurity | undefined;
    if (security === undefined) {
      // Composed call credentials never go out in clear text: on an insecure fallback, RPCs
      // that would carry them fail, as grpc-go refuses them on an insecure connection.
      const refused =
        callCredentials && !this.fallback._isSecure() ? INSECURE_FALLBACK_CREDENTIALS : undefined;
      return this.fallback._createSecureConnector(target, options, refused ?? callCredentials);
    }
    return clusterConnector(security, target, options, callCredentials);
  }
}

/** A connector with the cluster's certificates, holding their providers while it lives. */
function clusterConnector(
  security: SubchannelSecurity,
  target: ChannelTarget,
  options: ChannelOptions,
  callCredentials: CallCredentials | undefined,
): SecureConnector {
  if ('error' in security) {
    const fallback = ChannelCredentials.createInsecure()._createSecureConnector(target, options);
    // Never the fallback's connection (A29): every attempt fails with the reason.
    return {
      connect: () => Promise.reject(new Error(security.error)),
      waitForReady: () => Promise.resolve(),
      getCallCredentials: () => callCredentials ?? fallback.getCallCredentials(),
      destroy: () => fallback.destroy(),
    };
  }
  return new ClusterTlsConnector({
    cluster: security.cluster,
    ca: security.ca === 'system' ? systemRootsLease() : lease(security.ca),
    identity: security.identity && lease(security.identity),
    subjectAltNameMatchers: security.subjectAltNameMatchers,
    sni: sniFor(security, options[ENDPOINT_HOSTNAME_OPTION] as string | undefined),
    autoSniSanValidation: security.autoSniSanValidation,
    callCredentials,
  });
}

function lease(ref: { name: string; config: CertificateProviderConfig }): ProviderLease {
  return leaseProvider(ref.name, ref.config);
}

/**
 * Server credentials for XdsServer: a connection whose filter chain has a DownstreamTlsContext
 * is served with TLS (requesting, and if so configured requiring, a client certificate
 * verified against the chain's CA); any other uses `fallback`. Given to a plain grpc-js
 * Server, they are the fallback.
 */
export class XdsServerCredentials extends ServerCredentials {
  constructor(
    /** @internal */
    readonly fallback: ServerCredentials,
  ) {
    super(null);
  }

  override _isSecure(): boolean {
    return this.fallback._isSecure();
  }

  override _getSecureContextOptions(): ReturnType<ServerCredentials['_getSecureContextOptions']> {
    return this.fallback._getSecureContextOptions();
  }

  override _getConstructorOptions(): ReturnType<ServerCredentials['_getConstructorOptions']> {
    return this.fallback._getConstructorOptions();
  }

  override _addWatcher(watcher: Parameters<ServerCredentials['_addWatcher']>[0]): void {
    this.fallback._addWatcher(watcher);
  }

  override _removeWatcher(watcher: Parameters<ServerCredentials['_removeWatcher']>[0]): void {
    this.fallback._removeWatcher(watcher);
  }

  override _getInterceptors(): ReturnType<ServerCredentials['_getInterceptors']> {
    return this.fallback._getInterceptors();
  }

  _equals(other: ServerCredentials): boolean {
    return (
      other === this ||
      (other instanceof XdsServerCredentials && this.fallback._equals(other.fallback))
    );
  }
}

/** A filter chain's credentials, and what to call once its connections are gone. */
export interface ChainCredentials {
  readonly credentials: ServerCredentials;
  /** A87's trust-domain check of the client certificate (in the handshake, else per RPC). */
  readonly clientCheck?: SpiffeClientCheck;
  release(): void;
}

/**
 * The credentials of one filter chain: the chain's TLS settings when the server uses
 * XdsServerCredentials and the chain has them, else the fallback (or the server's plain
 * credentials, which ignore xDS security as gRPC does).
 */
export function chainCredentials(
  serverCredentials: ServerCredentials,
  security: DownstreamTlsConfig | undefined,
  providers: ReadonlyMap<string, CertificateProviderConfig>,
): ChainCredentials {
  if (!(serverCredentials instanceof XdsServerCredentials)) {
    return { credentials: serverCredentials, release() {} };
  }
  if (security === undefined) return { credentials: serverCredentials.fallback, release() {} };
  const identityName = security.identityCertificateProvider.instanceName;
  const caName = security.rootCertificateProvider?.instanceName;
  const identityConfig = providers.get(identityName);
  const caConfig = caName === undefined ? undefined : providers.get(caName);
  const leases: ProviderLease[] = [];
  if (identityConfig) leases.push(leaseProvider(identityName, identityConfig));
  if (caName !== undefined && caConfig) leases.push(leaseProvider(caName, caConfig));
  // Listener validation NACKs names the bootstrap lacks; should one get here, a provider that
  // never delivers makes grpc-js drop the chain's connections rather than serve them in clear.
  const none: experimental.CertificateProvider = {
    addCaCertificateListener: (l) => process.nextTick(() => l(null)),
    removeCaCertificateListener() {},
    addIdentityCertificateListener: (l) => process.nextTick(() => l(null)),
    removeIdentityCertificateListener() {},
  };
  const identity = identityConfig ? leases[0]!.provider : none;
  const caLease = caName !== undefined && caConfig ? leases[leases.length - 1] : undefined;
  const ca = caName === undefined ? null : caLease ? caLease.provider : none;
  const spiffe =
    caLease && caConfig?.config.spiffeTrustBundleMapFile ? spiffeClientCheck(caLease) : undefined;
  // grpc-js's parameters are misnamed: the first is the identity provider, the second the CA.
  const credentials = experimental.createCertificateProviderServerCredentials(
    identity,
    ca,
    security.requireClientCertificate,
  );
  return {
    credentials,
    ...(spiffe ? { clientCheck: spiffe } : {}),
    release: () => {
      spiffe?.stop();
      leases.forEach((l) => l.release());
    },
  };
}
