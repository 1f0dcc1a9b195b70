// The names an RBAC `authenticated.principal_name` is matched against (gRFC A41): the client
// certificate's URI SANs, else its DNS SANs, else its subject as an RFC 2253 name; with no
// certificate, the empty string.
import { X509Certificate } from 'node:crypto';
import {
  PeerCertificateCache,
  type PeerCertificateLike,
} from '../certificates/peer-certificate-cache';

/** What RBAC reads of a verified client certificate. */
export interface PeerIdentity {
  readonly uriSans: readonly string[];
  readonly dnsSans: readonly string[];
  /** RFC 2253: most specific attribute first, `,`-separated, special characters escaped. */
  readonly subject: string;
}

/**
 * Identities of the certificates seen most recently: an RPC on a known client's connection
 * parses nothing. A server with more distinct clients than this parses the others per RPC.
 */
const PEER_IDENTITY_CACHE_SIZE = 1024;
const cache = new PeerCertificateCache<PeerIdentity | undefined>(PEER_IDENTITY_CACHE_SIZE);

/**
 * Reads a peer certificate as grpc-js's `getAuthContext().sslPeerCertificate` gives it (Node's
 * `tls.PeerCertificate`, whose `raw` is the DER). Undefined without one, or when it cannot be
 * parsed (then `authenticated` matchers see no certificate).
 */
export function peerIdentity(
  certificate: PeerCertificateLike | undefined,
): PeerIdentity | undefined {
  if (!certificate?.raw) return undefined;
  return cache.get(certificate, parseIdentity);
}

function parseIdentity(raw: Buffer): PeerIdentity | undefined {
  try {
    const x509 = new X509Certificate(raw);
    const sans = splitSans(x509.subjectAltName ?? '');
    return Object.freeze({
      uriSans: sans.filter(([kind]) => kind === 'URI').map(([, value]) => value),
      dnsSans: sans.filter(([kind]) => kind === 'DNS').map(([, value]) => value),
      subject: rfc2253(x509.subject),
    });
  } catch {
    return undefined;
  }
}

/**
 * Node's `subjectAltName`: `DNS:a, URI:spiffe://b, IP Address:1.2.3.4`, a value that contains
 * special characters JSON-quoted (`DNS:"a, b"`).
 */
function splitSans(text: string): [kind: string, value: string][] {
  const out: [string, string][] = [];
  const entry = /([^:,]+):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/y;
  let match: RegExpExecArray | null;
  while (entry.lastIndex < text.length && (match = entry.exec(text))) {
    const raw = match[2]!;
    out.push([match[1]!.trim(), raw.startsWith('"') ? (JSON.parse(raw) as string) : raw]);
  }
  return out;
}

/**
 * Node's `subject` is one attribute per line, least specific first, each value already escaped
 * as RFC 2253 wants (`O=Example\, Inc.`); RFC 2253 lists them most specific first.
 */
function rfc2253(subject: string): string {
  return subject === '' ? '' : subject.split('\n').reverse().join(',');
}

/** A41's order: URI SANs if any, else DNS SANs if any, else the subject; no certificate: ''. */
export function principalNames(peer: PeerIdentity | undefined): readonly string[] {
  if (!peer) return [''];
  if (peer.uriSans.length > 0) return peer.uriSans;
  if (peer.dnsSans.length > 0) return peer.dnsSans;
  return [peer.subject];
}
