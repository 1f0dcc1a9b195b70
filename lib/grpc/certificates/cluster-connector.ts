// The TLS connector of a subchannel whose cluster has an UpstreamTlsContext (gRFC A29): our own
// rather than grpc-js's certificate-provider credentials, because the checks after the
// handshake are ours to make and to word: the CA's (or, with a SPIFFE trust bundle map, gRFC
// A87's) verification, the SAN matchers (or A101's SAN check against the SNI), and the SNI
// itself, which A101 may leave out. Every failure rejects the connection attempt with an Error
// saying why; grpc-js then fails RPCs with UNAVAILABLE and that text. Nothing here throws into
// grpc-js: callbacks of TLS sockets and providers catch what they call.
import {
  connect as tlsConnect,
  createSecureContext,
  type SecureContext,
  type TLSSocket,
} from 'node:tls';
import type { Socket } from 'node:net';
import { CallCredentials, experimental } from '@grpc/grpc-js';
import type { CaUpdate } from '../../client/credentials/certificate-file-watcher';
import { sniSanCheck, subjectAltNameCheck } from './san-matcher';
import { peerChain, spiffeVerificationFailure } from './spiffe-verification';
import type { ProviderLease } from './provider-store';
import type { SubjectAltNameMatcher } from '../../resources/cluster';

type IdentityUpdate = experimental.IdentityCertificateUpdate;

export interface ClusterConnectorOptions {
  readonly cluster: string;
  /** The CA (or SPIFFE map) provider; the identity provider for mTLS. Released by destroy(). */
  readonly ca: ProviderLease;
  readonly identity: ProviderLease | undefined;
  readonly subjectAltNameMatchers: readonly SubjectAltNameMatcher[];
  /** The SNI to send (A101); undefined sends none. */
  readonly sni: string | undefined;
  /** A101: the server certificate must have a DNS SAN matching the SNI sent, instead of the matchers. */
  readonly autoSniSanValidation: boolean;
  readonly callCredentials: CallCredentials | undefined;
}

export class ClusterTlsConnector implements experimental.SecureConnector {
  private ca: CaUpdate | null | undefined;
  private identity: IdentityUpdate | null | undefined;
  private context: SecureContext | { readonly error: string } | undefined;
  private readyWaiters: (() => void)[] = [];
  private destroyed = false;
  private readonly onCa = (update: CaUpdate | null) => this.update(() => (this.ca = update));
  private readonly onIdentity = (update: IdentityUpdate | null) =>
    this.update(() => (this.identity = update));

  constructor(private readonly options: ClusterConnectorOptions) {
    options.ca.provider.addCaCertificateListener(this.onCa);
    options.identity?.provider.addIdentityCertificateListener(this.onIdentity);
  }

  connect(socket: Socket): Promise<experimental.SecureConnectResult> {
    return new Promise((resolve, reject) => {
      const context = this.secureContext();
      if ('error' in context) {
        reject(new Error(context.error));
        return;
      }
      const spiffeMap = this.ca?.spiffeBundleMap;
      const { sni } = this.options;
      const tlsSocket: TLSSocket = tlsConnect({
        socket,
        secureContext: context,
        ALPNProtocols: ['h2'],
        ...(sni === undefined ? {} : { servername: sni }),
        // Verified below, where the reason can be ours and SPIFFE's rules applied.
        rejectUnauthorized: false,
        checkServerIdentity: () => undefined,
      });
      const fail = (error: Error) => {
        tlsSocket.destroy();
        reject(error);
      };
      const closed = () => reject(new Error('connection closed during the TLS handshake'));
      tlsSocket.once('error', fail);
      tlsSocket.once('close', closed);
      tlsSocket.once('secureConnect', () => {
        tlsSocket.removeListener('error', fail);
        tlsSocket.removeListener('close', closed);
        let problem: string | undefined;
        try {
          problem = this.serverProblem(tlsSocket, spiffeMap);
        } catch (e) {
          problem = `cannot verify the server certificate: ${String(e)}`;
        }
        if (problem === undefined) resolve({ socket: tlsSocket, secure: true });
        else fail(new Error(`cluster "${this.options.cluster}": ${problem}`));
      });
    });
  }

  /** Resolves once the providers have delivered (or failed to deliver) their certificates. */
  waitForReady(): Promise<void> {
    if (this.hasUpdates()) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  getCallCredentials(): CallCredentials {
    return this.options.callCredentials ?? CallCredentials.createEmpty();
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.options.ca.provider.removeCaCertificateListener(this.onCa);
    this.options.identity?.provider.removeIdentityCertificateListener(this.onIdentity);
    this.options.ca.release();
    this.options.identity?.release();
    for (const resolve of this.readyWaiters.splice(0)) resolve();
  }

  /** Why the server is refused, or undefined to accept it. */
  private serverProblem(
    socket: TLSSocket,
    spiffeMap: CaUpdate['spiffeBundleMap'],
  ): string | undefined {
    const certificate = socket.getPeerCertificate(true);
    if (!certificate?.raw) return 'the server sent no certificate';
    if (spiffeMap) {
      const failure = spiffeVerificationFailure(peerChain(certificate), spiffeMap);
      if (failure) return `SPIFFE verification failed: ${failure}`;
    }
    if (!socket.authorized) {
      return `certificate verification failed: ${String(socket.authorizationError)}`;
    }
    const { sni, autoSniSanValidation, subjectAltNameMatchers } = this.options;
    // A101: with an SNI sent, a DNS SAN matching it replaces the configured matchers.
    const check =
      autoSniSanValidation && sni !== undefined
        ? sniSanCheck(sni)
        : subjectAltNameCheck(subjectAltNameMatchers);
    return check('', certificate)?.message;
  }

  private update(apply: () => void): void {
    try {
      apply();
      this.context = undefined;
      if (!this.hasUpdates()) return;
      for (const resolve of this.readyWaiters.splice(0)) resolve();
    } catch {
      // A listener must not throw into a provider; the next connect reports the state.
    }
  }

  private hasUpdates(): boolean {
    return this.ca !== undefined && (!this.options.identity || this.identity !== undefined);
  }

  private secureContext(): SecureContext | { readonly error: string } {
    if (this.context) return this.context;
    const { ca, identity } = this;
    const missing = !ca
      ? this.options.ca
      : this.options.identity && !identity
        ? this.options.identity
        : undefined;
    if (missing) {
      const why = missing.problem ?? 'no certificates read yet';
      return {
        error: `cluster "${this.options.cluster}": certificate provider "${missing.name}": ${why}`,
      };
    }
    try {
      this.context = createSecureContext({
        ca: ca!.caCertificate,
        ...(identity ? { cert: identity.certificate, key: identity.privateKey } : {}),
      });
    } catch (e) {
      this.context = {
        error: `cluster "${this.options.cluster}": cannot use the certificates: ${String(e)}`,
      };
    }
    return this.context;
  }
}
