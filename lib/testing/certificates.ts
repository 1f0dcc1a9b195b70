// Test certificates made at test time (decision 0016): a CA, and server and client certificates
// it signs with the SANs a test needs (DNS, URI such as SPIFFE IDs, IP), as PEM, optionally
// written to files for a `file_watcher` certificate provider (or as A87's SPIFFE trust bundle
// map). Node has no X.509 writer, so the
// few DER structures a certificate needs are encoded here and signed with node:crypto (ECDSA
// P-256): nothing to install, no `openssl` on the machine needed. For tests only: no
// extensions beyond basic constraints, key usage and subject alternative names.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { mkdtemp, rename, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SubjectAltNames {
  /** DNS names, e.g. `localhost`, `*.example.com`. */
  readonly dns?: readonly string[];
  /** URIs, e.g. `spiffe://example.org/ns/default/sa/server`. */
  readonly uris?: readonly string[];
  /** IPv4 or IPv6 addresses. */
  readonly ips?: readonly string[];
}

export interface IssueOptions extends SubjectAltNames {
  /** The subject's common name (default: the first SAN, or `test`). */
  readonly commonName?: string;
  /** Default 1 day from now. The certificate is valid from an hour ago. */
  readonly validForMs?: number;
}

/** A certificate and its private key, in PEM. */
export interface TestCertificate {
  readonly certificate: string;
  readonly privateKey: string;
}

/** Paths of the PEM files a `file_watcher` provider reads. */
export interface CertificateFiles {
  readonly certificateFile?: string;
  readonly privateKeyFile?: string;
  readonly caCertificateFile?: string;
  /** gRFC A87's SPIFFE trust bundle map (JSON). */
  readonly spiffeTrustBundleMapFile?: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** A certificate authority for tests: `TestCertificateAuthority.create()`, then `issue()`. */
export class TestCertificateAuthority {
  private constructor(
    private readonly key: KeyObject,
    private readonly name: Buffer,
    /** The CA's own certificate, in PEM: what peers trust. */
    readonly certificate: string,
  ) {}

  /** A new self-signed CA (its own key pair). */
  static create(commonName = 'xds-client test CA'): TestCertificateAuthority {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const name = distinguishedName(commonName);
    const der = certificateDer({
      issuer: name,
      subject: name,
      subjectKey: publicKey,
      signingKey: privateKey,
      validForMs: 30 * DAY_MS,
      extensions: [basicConstraints(true), keyUsage(KEY_CERT_SIGN | CRL_SIGN)],
    });
    return new TestCertificateAuthority(privateKey, name, pem('CERTIFICATE', der));
  }

  /**
   * An intermediate CA: its certificate is signed by this CA, so the leaves it issues chain
   * through it to this CA (a peer sends `leaf.certificate + intermediate.certificate`).
   */
  intermediate(commonName = 'xds-client test intermediate CA'): TestCertificateAuthority {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const name = distinguishedName(commonName);
    const der = certificateDer({
      issuer: this.name,
      subject: name,
      subjectKey: publicKey,
      signingKey: this.key,
      validForMs: 30 * DAY_MS,
      extensions: [basicConstraints(true), keyUsage(KEY_CERT_SIGN | CRL_SIGN)],
    });
    return new TestCertificateAuthority(privateKey, name, pem('CERTIFICATE', der));
  }

  /** A leaf certificate for a server or a client, signed by this CA, with a new key. */
  issue(options: IssueOptions = {}): TestCertificate {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const commonName =
      options.commonName ?? options.dns?.[0] ?? options.uris?.[0] ?? options.ips?.[0] ?? 'test';
    const extensions = [basicConstraints(false), keyUsage(DIGITAL_SIGNATURE | KEY_ENCIPHERMENT)];
    const sans = subjectAltNames(options);
    if (sans) extensions.push(sans);
    const der = certificateDer({
      issuer: this.name,
      subject: distinguishedName(commonName),
      subjectKey: publicKey,
      signingKey: this.key,
      validForMs: options.validForMs ?? DAY_MS,
      extensions,
    });
    return {
      certificate: pem('CERTIFICATE', der),
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    };
  }
}

/**
 * Writes PEM files for a `file_watcher` provider into `dir` (default: a new temporary
 * directory) as `certificate.pem`, `private_key.pem` and `ca_certificate.pem`, and returns their
 * paths. Writing again to the same directory rotates the certificates the provider reads.
 */
export async function writeCertificateFiles(
  contents: {
    readonly identity?: TestCertificate;
    readonly ca?: string;
    /** JSON text, e.g. from `spiffeTrustBundleMap()`, written as `spiffe_bundle_map.json`. */
    readonly spiffeBundleMap?: string;
  },
  dir?: string,
): Promise<CertificateFiles & { readonly dir: string }> {
  const target = dir ?? (await mkdtemp(join(tmpdir(), 'xds-client-certs-')));
  const files: { -readonly [K in keyof CertificateFiles]: string } = {};
  // The key first: a provider reading between the two writes sees a pair that does not match,
  // and waits for the next refresh rather than using it.
  if (contents.identity) {
    files.privateKeyFile = join(target, 'private_key.pem');
    await replaceFile(files.privateKeyFile, contents.identity.privateKey);
    files.certificateFile = join(target, 'certificate.pem');
    await replaceFile(files.certificateFile, contents.identity.certificate);
  }
  if (contents.ca !== undefined) {
    files.caCertificateFile = join(target, 'ca_certificate.pem');
    await replaceFile(files.caCertificateFile, contents.ca);
  }
  if (contents.spiffeBundleMap !== undefined) {
    files.spiffeTrustBundleMapFile = join(target, 'spiffe_bundle_map.json');
    await replaceFile(files.spiffeTrustBundleMapFile, contents.spiffeBundleMap);
  }
  return { dir: target, ...files };
}

/**
 * A SPIFFE trust bundle map (gRFC A87) as JSON text: each trust domain with its roots, the CAs'
 * certificates as `x509-svid` keys.
 */
export function spiffeTrustBundleMap(
  domains: Readonly<Record<string, readonly TestCertificateAuthority[]>>,
): string {
  const trustDomains: Record<string, unknown> = {};
  for (const [domain, authorities] of Object.entries(domains)) {
    trustDomains[domain] = {
      keys: authorities.map((authority) => ({
        kty: 'EC',
        use: 'x509-svid',
        x5c: [authority.certificate.replace(/-----[A-Z ]+-----|\s/g, '')],
      })),
    };
  }
  return JSON.stringify({ trust_domains: trustDomains }, null, 2);
}

/** Written beside and renamed into place, as rotation tools do: a reader never sees half. */
async function replaceFile(file: string, text: string): Promise<void> {
  const next = `${file}.next`;
  await writeFile(next, text);
  await rename(next, file);
}

// ---- X.509 (RFC 5280) in DER ----

const KEY_CERT_SIGN = 0x04;
const CRL_SIGN = 0x02;
const DIGITAL_SIGNATURE = 0x80;
const KEY_ENCIPHERMENT = 0x20;

interface CertificateFields {
  readonly issuer: Buffer;
  readonly subject: Buffer;
  readonly subjectKey: KeyObject;
  readonly signingKey: KeyObject;
  readonly validForMs: number;
  readonly extensions: readonly Buffer[];
}

function certificateDer(fields: CertificateFields): Buffer {
  const now = Date.now();
  const serial = randomBytes(16);
  serial[0]! &= 0x7f; // positive
  const algorithm = sequence(oid('1.2.840.10045.4.3.2')); // ecdsa-with-SHA256
  const spki = fields.subjectKey.export({ type: 'spki', format: 'der' });
  const tbs = sequence(
    tlv(0xa0, integer(Buffer.from([2]))), // version 3
    integer(serial),
    algorithm,
    fields.issuer,
    sequence(time(now - 60 * 60 * 1000), time(now + fields.validForMs)),
    fields.subject,
    spki,
    tlv(0xa3, sequence(...fields.extensions, extension('2.5.29.14', false, keyId(spki)))),
  );
  const signature = sign('sha256', tbs, fields.signingKey);
  return sequence(tbs, algorithm, bitString(signature));
}

function distinguishedName(commonName: string): Buffer {
  return sequence(tlv(0x31, sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName)))));
}

function basicConstraints(ca: boolean): Buffer {
  return extension('2.5.29.19', true, sequence(...(ca ? [tlv(0x01, Buffer.from([0xff]))] : [])));
}

function keyUsage(bits: number): Buffer {
  return extension('2.5.29.15', true, tlv(0x03, Buffer.from([0x00, bits])));
}

function subjectAltNames(sans: SubjectAltNames): Buffer | undefined {
  const names = [
    ...(sans.dns ?? []).map((n) => tlv(0x82, Buffer.from(n, 'ascii'))),
    ...(sans.uris ?? []).map((u) => tlv(0x86, Buffer.from(u, 'ascii'))),
    ...(sans.ips ?? []).map((ip) => tlv(0x87, ipBytes(ip))),
  ];
  return names.length ? extension('2.5.29.17', false, sequence(...names)) : undefined;
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  if (isIP(ip) !== 6) throw new Error(`TestCertificateAuthority: not an IP address: "${ip}"`);
  const [head = '', tail] = ip.split('::');
  const groups = (s: string) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  const parts = [oid(id)];
  if (critical) parts.push(tlv(0x01, Buffer.from([0xff])));
  parts.push(octets(value));
  return sequence(...parts);
}

/** A key identifier: SHA-1 of the SubjectPublicKeyInfo (RFC 5280 hashes only the key bits; any unique value will do). */
function keyId(spki: Buffer): Buffer {
  return octets(createHash('sha1').update(spki).digest());
}

function time(ms: number): Buffer {
  const iso = new Date(ms).toISOString(); // 2024-01-02T03:04:05.678Z
  const text = iso.slice(2, 4) + iso.slice(5, 7) + iso.slice(8, 10) + iso.slice(11, 13);
  return tlv(0x17, Buffer.from(`${text}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`)); // UTCTime
}

function oid(text: string): Buffer {
  const [a = 0, b = 0, ...rest] = text.split('.').map(Number);
  const bytes = [40 * a + b];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = n >>> 7; v > 0; v >>>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** A non-negative INTEGER in DER's minimal form (a redundant leading zero is invalid DER). */
function integer(value: Buffer): Buffer {
  let start = 0;
  while (start < value.length - 1 && value[start] === 0 && !(value[start + 1]! & 0x80)) start++;
  const minimal = value.subarray(start);
  return tlv(0x02, minimal[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), minimal]) : minimal);
}

function bitString(value: Buffer): Buffer {
  return tlv(0x03, Buffer.concat([Buffer.from([0]), value]));
}

function octets(value: Buffer): Buffer {
  return tlv(0x04, value);
}

function sequence(...items: Buffer[]): Buffer {
  return tlv(0x30, Buffer.concat(items));
}

function tlv(tag: number, value: Buffer): Buffer {
  const n = value.length;
  let length: number[];
  if (n < 0x80) length = [n];
  else if (n < 0x100) length = [0x81, n];
  else length = [0x82, n >> 8, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), value]);
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
