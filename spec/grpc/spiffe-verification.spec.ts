// gRFC A87's rules for a peer certificate under a SPIFFE trust bundle map, one by one: the
// SPIFFE ID's form (SPIFFE-ID.md), one URI SAN, the trust domain's roots only, validity.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import {
  parseSpiffeId,
  spiffeVerificationFailure,
} from '../../lib/grpc/certificates/spiffe-verification';
import { TestCertificateAuthority } from '../../lib/testing';

describe('SPIFFE verification of a peer certificate (gRFC A87)', () => {
  it('parses SPIFFE IDs and refuses what SPIFFE-ID.md refuses', () => {
    assert.deepEqual(parseSpiffeId('spiffe://example.org/ns/default/sa/x'), {
      trustDomain: 'example.org',
      path: '/ns/default/sa/x',
    });
    assert.deepEqual(parseSpiffeId('spiffe://example.org'), {
      trustDomain: 'example.org',
      path: '',
    });
    for (const bad of [
      'https://example.org/x',
      'SPIFFE://example.org/x',
      'spiffe://Example.org/x',
      'spiffe://user@example.org/x',
      'spiffe://example.org:8443/x',
      'spiffe:///x',
      'spiffe://example.org/x?q=1',
      'spiffe://example.org/x#f',
      'spiffe://example.org/a//b',
      'spiffe://example.org/./x',
      'spiffe://example.org/x/..',
      'spiffe://example.org/x/',
      'spiffe://example.org/%41',
    ]) {
      assert.equal(typeof parseSpiffeId(bad), 'string', bad);
    }
  });

  const a = TestCertificateAuthority.create('a');
  const b = TestCertificateAuthority.create('b');
  const map = new Map([
    ['a.test', [new X509Certificate(a.certificate)]],
    ['b.test', [new X509Certificate(b.certificate)]],
  ]);
  const leaf = (ca: TestCertificateAuthority, uris: string[], dns: string[] = []) => [
    new X509Certificate(ca.issue({ uris, dns }).certificate),
  ];

  it('accepts a leaf issued by a root of the trust domain of its one SPIFFE ID', () => {
    assert.equal(
      spiffeVerificationFailure(leaf(a, ['spiffe://a.test/x'], ['x.example']), map),
      undefined,
    );
    assert.equal(spiffeVerificationFailure(leaf(b, ['spiffe://b.test/y']), map), undefined);
  });

  const failures: [string, X509Certificate[], RegExp][] = [
    ['no URI SAN', leaf(a, [], ['x.example']), /has 0 URI SANs/],
    ['two URI SANs', leaf(a, ['spiffe://a.test/x', 'spiffe://a.test/y']), /has 2 URI SANs/],
    ['a URI SAN that is not a SPIFFE ID', leaf(a, ['https://a.test/x']), /is not a SPIFFE ID/],
    ['a trust domain not in the map', leaf(a, ['spiffe://c.test/x']), /"c\.test" is not in/],
    [
      'a root of another trust domain',
      leaf(a, ['spiffe://b.test/x']),
      /does not chain to a root of trust domain "b\.test"/,
    ],
  ];
  for (const [what, chain, reason] of failures) {
    it(`refuses ${what}`, () => assert.match(spiffeVerificationFailure(chain, map) ?? '', reason));
  }

  it('refuses a leaf that is not valid at the time of the check', () => {
    const chain = leaf(a, ['spiffe://a.test/x']);
    const later = new Date(Date.now() + 2 * 24 * 60 * 60 * 1000);
    assert.match(spiffeVerificationFailure(chain, map, later) ?? '', /is not valid now/);
  });
});
