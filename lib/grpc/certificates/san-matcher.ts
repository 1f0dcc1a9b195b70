// gRFC A29's server authorization: instead of the Web PKI hostname check, the server
// certificate's subject alternative names (DNS, URI, email, IP) must match one of the cluster's
// `match_subject_alt_names`. IP SANs are compared in canonical form; an exact matcher also
// matches a wildcard DNS SAN (`*.example.com` covers `a.example.com`), as Envoy does.
import { SocketAddress, isIP } from 'node:net';
import type { PeerCertificate } from 'node:tls';
import type { SubjectAltNameMatcher } from '../../resources/cluster';
import { compileSafeRegex } from '../../resources/safe-regex';

interface San {
  readonly type: 'DNS' | 'URI' | 'email' | 'IP';
  readonly value: string;
}

type Test = (san: San) => boolean;

/**
 * A grpc-js `checkServerIdentity` for these matchers: undefined (accept) when one matches or
 * there are none, else the error that fails the handshake. The hostname is not checked.
 */
export function subjectAltNameCheck(
  matchers: readonly SubjectAltNameMatcher[],
): (hostname: string, certificate: PeerCertificate) => Error | undefined {
  const tests = matchers.map(compileMatcher);
  return (_hostname, certificate) => {
    if (tests.length === 0) return undefined;
    const sans = parseSubjectAltNames(certificate.subjectaltname ?? '');
    for (const san of sans) {
      if (san.value !== '' && tests.some((test) => test(san))) return undefined;
    }
    const names = sans.map((s) => `${s.type}:${s.value}`).join(', ') || 'none';
    return new Error(
      `certificate check failure: no subject alternative name of the server certificate ` +
        `(${names}) matches the cluster's match_subject_alt_names`,
    );
  };
}

/**
 * gRFC A101's `auto_sni_san_validation`: the server certificate must have a DNS SAN for the SNI
 * the client sent (case-insensitive, a wildcard SAN covering one label), whatever the matchers.
 */
export function sniSanCheck(
  sni: string,
): (hostname: string, certificate: PeerCertificate) => Error | undefined {
  const want = sni.toLowerCase();
  return (_hostname, certificate) => {
    const dns = parseSubjectAltNames(certificate.subjectaltname ?? '').filter(
      (s) => s.type === 'DNS',
    );
    for (const san of dns) {
      const value = san.value.toLowerCase();
      if (value === want || wildcardMatches(value, want)) return undefined;
    }
    const names = dns.map((s) => s.value).join(', ') || 'none';
    return new Error(
      `certificate check failure: no DNS subject alternative name of the server certificate ` +
        `(${names}) matches the SNI sent, ${JSON.stringify(sni)} (auto_sni_san_validation)`,
    );
  };
}

function compileMatcher(matcher: SubjectAltNameMatcher): Test {
  if (matcher.type === 'safe_regex') {
    const compiled = compileSafeRegex(matcher.regex);
    // Validated when the Cluster was accepted; a regex that fails here matches nothing.
    if ('error' in compiled) return () => false;
    return (san) => compiled.regex.testExact(san.value);
  }
  const fold = matcher.ignoreCase ? (v: string) => v.toLowerCase() : (v: string) => v;
  const want = fold(matcher.value);
  switch (matcher.type) {
    case 'exact':
      return (san) =>
        fold(san.value) === want || (san.type === 'DNS' && wildcardMatches(fold(san.value), want));
    case 'prefix':
      return (san) => fold(san.value).startsWith(want);
    case 'suffix':
      return (san) => fold(san.value).endsWith(want);
    case 'contains':
      return (san) => fold(san.value).includes(want);
  }
}

/** `*.example.com` matches `a.example.com`, not `example.com` nor `a.b.example.com`. */
function wildcardMatches(san: string, host: string): boolean {
  if (!san.startsWith('*.') || san.length < 3) return false;
  const dot = host.indexOf('.');
  return dot > 0 && host.slice(dot) === san.slice(1);
}

const SAN_ENTRY = /(DNS|URI|email|IP Address|[^:,]+):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/gy;

/**
 * Node's `subjectaltname` text (`DNS:a, URI:spiffe://x, IP Address:10.0.0.1`) → entries of the
 * four types A29 considers. Node quotes, JSON-style, a value that holds a comma or a quote.
 */
export function parseSubjectAltNames(text: string): San[] {
  const sans: San[] = [];
  SAN_ENTRY.lastIndex = 0;
  for (let match = SAN_ENTRY.exec(text); match; match = SAN_ENTRY.exec(text)) {
    const raw = match[2]!;
    let value = raw;
    if (raw.startsWith('"')) {
      try {
        value = JSON.parse(raw) as string;
      } catch {
        continue;
      }
    }
    switch (match[1]) {
      case 'DNS':
      case 'URI':
      case 'email':
        sans.push({ type: match[1], value });
        break;
      case 'IP Address':
        sans.push({ type: 'IP', value: canonicalIp(value) });
        break;
    }
    if (SAN_ENTRY.lastIndex >= text.length) break;
  }
  return sans;
}

/** RFC 5952's form for IPv6 (lower case, longest zero run compressed); IPv4 as is. */
function canonicalIp(text: string): string {
  if (isIP(text) !== 6) return text;
  return new SocketAddress({ address: text, family: 'ipv6' }).address;
}
