// gRFC A87's SPIFFE verification of a peer certificate: the leaf carries exactly one URI SAN, a
// well-formed SPIFFE ID; the trust domain of that ID selects the roots in the trust bundle map;
// the chain must lead to one of those roots. Node's TLS verifies a chain against one CA list
// (we give it every trust domain's roots), so which domain's root anchors the chain is checked
// here, link by link, with the peer's intermediates.
import { X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import type { SpiffeBundleMap } from '../../client/credentials/spiffe-bundle-map';
import { parseSubjectAltNames } from './san-matcher';

// Its trust-domain rule, loaded with the first check: a map to check against was read by then,
// and the plugin's import does not load the map's parser (decision 0095).
type BundleMapModule = typeof import('../../client/credentials/spiffe-bundle-map');
const bundleMaps = (): BundleMapModule =>
  require('../../client/credentials/spiffe-bundle-map') as BundleMapModule;

/** Longer chains are refused (as OpenSSL's default depth bounds them). */
const MAX_DEPTH = 10;

/** The SPIFFE ID's parts, or why `uri` is not one (SPIFFE-ID.md, section 2). */
export function parseSpiffeId(uri: string): { trustDomain: string; path: string } | string {
  const match = /^spiffe:\/\/([^/?#]*)((?:\/[^/?#]*)*)$/.exec(uri);
  if (!match) return 'not a spiffe:// URI without query or fragment';
  const [, trustDomain = '', path = ''] = match;
  if (!bundleMaps().TRUST_DOMAIN.test(trustDomain)) {
    return `trust domain "${trustDomain}" is not lower-case letters, digits, ".", "-", "_"`;
  }
  for (const segment of path.split('/').slice(1)) {
    if (!/^[A-Za-z0-9._-]+$/.test(segment) || segment === '.' || segment === '..') {
      return `path segment "${segment}" is not letters, digits, ".", "-", "_" (nor "." or "..")`;
    }
  }
  return { trustDomain, path };
}

/**
 * Why `chain` (leaf first, then what the peer sent with it) fails SPIFFE verification against
 * `map`, or undefined when it passes.
 */
export function spiffeVerificationFailure(
  chain: readonly X509Certificate[],
  map: SpiffeBundleMap,
  now = new Date(),
): string | undefined {
  const leaf = chain[0];
  if (!leaf) return 'no peer certificate';
  const uris = parseSubjectAltNames(leaf.subjectAltName ?? '').filter((s) => s.type === 'URI');
  if (uris.length !== 1) {
    return `the peer certificate has ${uris.length} URI SANs; a SPIFFE certificate has exactly one`;
  }
  const id = parseSpiffeId(uris[0]!.value);
  if (typeof id === 'string') return `URI SAN ${uris[0]!.value} is not a SPIFFE ID: ${id}`;
  const roots = map.get(id.trustDomain);
  if (!roots) return `trust domain "${id.trustDomain}" is not in the SPIFFE trust bundle map`;
  let current = leaf;
  const unused = chain.slice(1);
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    if (!validAt(current, now)) return `certificate "${current.subject}" is not valid now`;
    if (roots.some((root) => issuedBy(current, root) && validAt(root, now))) return undefined;
    const next = unused.findIndex((c) => c.ca && issuedBy(current, c));
    if (next < 0) break;
    current = unused.splice(next, 1)[0]!;
  }
  return `the peer certificate does not chain to a root of trust domain "${id.trustDomain}"`;
}

/** The chain Node shows for a peer (`getPeerCertificate(true)`), leaf first, as X509Certificate. */
export function peerChain(certificate: PeerCertificate): X509Certificate[] {
  const chain: X509Certificate[] = [];
  const seen = new Set<PeerCertificate>();
  let current: PeerCertificate | undefined = certificate;
  while (current?.raw && !seen.has(current) && chain.length <= MAX_DEPTH) {
    seen.add(current);
    chain.push(new X509Certificate(current.raw));
    current = (current as { issuerCertificate?: PeerCertificate }).issuerCertificate;
  }
  return chain;
}

function issuedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  return certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey);
}

function validAt(certificate: X509Certificate, now: Date): boolean {
  return new Date(certificate.validFrom) <= now && now <= new Date(certificate.validTo);
}
