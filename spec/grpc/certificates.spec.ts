// The pieces under XdsChannelCredentials (gRFC A29): SAN matching against a real certificate,
// and the file_watcher provider (first read, rotation seen by listeners, a broken file named
// and the last good certificates kept, a certificate and key that do not belong together).
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { PeerCertificate } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { FileWatcherCertificateProvider } from '../../lib/client/credentials/certificate-file-watcher';
import { subjectAltNameCheck } from '../../lib/grpc/certificates/san-matcher';
import type { SubjectAltNameMatcher } from '../../lib/resources/cluster';
import { TestCertificateAuthority, writeCertificateFiles } from '../../lib/testing';
import { waitUntil } from './helpers/backends';

const ca = TestCertificateAuthority.create();
const leaf = ca.issue({
  dns: ['*.svc.example.com', 'localhost'],
  uris: ['spiffe://example.org/ns/a/sa/server'],
  ips: ['2001:DB8:0::1', '10.0.0.1'],
});
const peer = {
  subjectaltname: new X509Certificate(leaf.certificate).subjectAltName,
} as PeerCertificate;

function accepts(...matchers: SubjectAltNameMatcher[]): boolean {
  return subjectAltNameCheck(matchers)('ignored.host', peer) === undefined;
}

describe('SAN matching (A29)', () => {
  it('accepts any certificate when there are no matchers', () => assert.ok(accepts()));

  it('matches each type of SAN, by each kind of matcher', () => {
    const exact = (value: string, ignoreCase = false) =>
      ({ type: 'exact', value, ignoreCase }) as const;
    assert.ok(accepts(exact('spiffe://example.org/ns/a/sa/server')));
    assert.ok(accepts(exact('localhost')));
    assert.ok(accepts(exact('2001:db8::1')), 'IPv6 in canonical form');
    assert.ok(accepts(exact('10.0.0.1')));
    assert.ok(accepts(exact('a.svc.example.com')), 'a wildcard DNS SAN');
    assert.ok(!accepts(exact('a.b.svc.example.com')), 'one label only');
    assert.ok(!accepts(exact('LOCALHOST')));
    assert.ok(accepts(exact('LOCALHOST', true)));
    assert.ok(accepts({ type: 'prefix', value: 'spiffe://example.org/', ignoreCase: false }));
    assert.ok(accepts({ type: 'suffix', value: '/SA/SERVER', ignoreCase: true }));
    assert.ok(accepts({ type: 'contains', value: '/ns/a/', ignoreCase: false }));
    assert.ok(
      accepts({ type: 'safe_regex', regex: 'spiffe://[a-z.]+/ns/a/.*', ignoreCase: false }),
    );
    assert.ok(!accepts({ type: 'safe_regex', regex: 'ns/a', ignoreCase: false }), 'a full match');
  });

  it('refuses with a message listing the certificate SANs', () => {
    const error = subjectAltNameCheck([{ type: 'exact', value: 'other', ignoreCase: false }])(
      'host',
      peer,
    );
    assert.match(
      String(error?.message),
      /^certificate check failure: .*URI:spiffe:\/\/example\.org/,
    );
    const none = subjectAltNameCheck([{ type: 'prefix', value: 'x', ignoreCase: false }])(
      'host',
      {} as PeerCertificate,
    );
    assert.match(String(none?.message), /\(none\)/);
  });
});

describe('file_watcher provider', () => {
  const providers: FileWatcherCertificateProvider[] = [];
  afterEach(() => providers.forEach((p) => p.close()));

  function watch(files: {
    certificateFile?: string;
    privateKeyFile?: string;
    caCertificateFile?: string;
  }) {
    const provider = new FileWatcherCertificateProvider(
      {
        certificateFile: files.certificateFile,
        privateKeyFile: files.privateKeyFile,
        caCertificateFile: files.caCertificateFile,
        refreshIntervalMs: 20,
      },
      'test',
    );
    providers.push(provider);
    const seen = { ca: [] as (string | null)[], identity: [] as (string | null)[] };
    provider.addCaCertificateListener((u) => seen.ca.push(u && u.caCertificate.toString()));
    provider.addIdentityCertificateListener((u) =>
      seen.identity.push(u && u.certificate.toString()),
    );
    return seen;
  }

  it('delivers the files, then each rotation once', async () => {
    const files = await writeCertificateFiles({ identity: leaf, ca: ca.certificate });
    const seen = watch(files);
    await waitUntil('first read', () => seen.identity.length === 1 && seen.ca.length === 1);
    assert.deepEqual(seen, { ca: [ca.certificate], identity: [leaf.certificate] });
    const next = ca.issue({ dns: ['next'] });
    await writeCertificateFiles({ identity: next }, files.dir);
    await waitUntil('rotation', () => seen.identity.length === 2);
    assert.equal(seen.identity[1], next.certificate);
    assert.equal(seen.ca.length, 1, 'an unchanged CA is not delivered again');
  });

  it('delivers null when the first read fails, and keeps the last good certificates after', async () => {
    const logged: string[] = [];
    grpc.setLogger({ ...console, error: (m: string) => void logged.push(m) });
    grpc.setLogVerbosity(grpc.logVerbosity.ERROR);
    try {
      const missing = watch({ caCertificateFile: '/nonexistent/ca.pem' });
      await waitUntil('null delivered', () => missing.ca.length === 1);
      assert.deepEqual(missing.ca, [null]);
      assert.ok(
        logged.some((m) => m.includes('cannot read /nonexistent/ca.pem')),
        logged.join('\n'),
      );

      const files = await writeCertificateFiles({ identity: leaf, ca: ca.certificate });
      const seen = watch(files);
      await waitUntil('first read', () => seen.identity.length === 1);
      await writeFile(files.caCertificateFile!, 'not a certificate');
      // A key that is not the certificate's: a rotation caught between its two writes.
      await writeFile(files.privateKeyFile!, ca.issue().privateKey);
      await waitUntil('the problems are logged', () =>
        logged.some((m) => m.includes(`${files.privateKeyFile} is not the private key of`)),
      );
      assert.ok(
        logged.some((m) => m.includes(`${files.caCertificateFile}: not a PEM certificate`)),
      );
      assert.deepEqual(seen, { ca: [ca.certificate], identity: [leaf.certificate] });
    } finally {
      grpc.setLogger(console);
      grpc.setLogVerbosity(grpc.logVerbosity.ERROR);
    }
  });
});
