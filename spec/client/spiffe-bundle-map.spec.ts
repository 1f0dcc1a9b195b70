// gRFC A87's SPIFFE trust bundle map file: what is read, and each way it is refused, by path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseSpiffeBundleMap } from '../../lib/client/credentials/spiffe-bundle-map';
import { TestCertificateAuthority, spiffeTrustBundleMap } from '../../lib/testing';

const errorsOf = (json: unknown): string => {
  const parsed = parseSpiffeBundleMap(typeof json === 'string' ? json : JSON.stringify(json));
  assert.ok('errors' in parsed, 'expected the map to be refused');
  return parsed.errors;
};

describe('SPIFFE trust bundle map files (gRFC A87)', () => {
  it("reads each trust domain's x509-svid roots, skipping jwt-svid keys; an empty map is valid", () => {
    const a = TestCertificateAuthority.create('a');
    const b = TestCertificateAuthority.create('b');
    const json = JSON.parse(spiffeTrustBundleMap({ 'a.test': [a], 'b.test': [b, a] })) as {
      trust_domains: Record<string, { keys: unknown[]; spiffe_sequence?: number }>;
    };
    json.trust_domains['a.test']!.keys.push({ kty: 'EC', use: 'jwt-svid', kid: 'k', x: '', y: '' });
    json.trust_domains['a.test']!.spiffe_sequence = 7;
    const map = parseSpiffeBundleMap(JSON.stringify(json));
    assert.ok(!('errors' in map));
    assert.deepEqual(
      [...map].map(([domain, roots]) => [domain, roots.map((r) => r.subject)]),
      [
        ['a.test', ['CN=a']],
        ['b.test', ['CN=b', 'CN=a']],
      ],
    );
    const empty = parseSpiffeBundleMap('{"trust_domains": {}}');
    assert.ok(!('errors' in empty) && empty.size === 0);
  });

  const key = { kty: 'EC', use: 'x509-svid', x5c: ['AAAA'] };
  const cases: [string, unknown, RegExp][] = [
    ['text that is not JSON', '{', /^not JSON: /],
    ['no trust_domains', {}, /^trust_domains: field not present$/],
    [
      'trust_domains not an object',
      { trust_domains: [] },
      /^trust_domains: must be an object \(got array\)$/,
    ],
    [
      'a trust domain name with upper case',
      { trust_domains: { 'A.test': {} } },
      /^trust_domains\["A\.test"\]: is not a SPIFFE trust domain/,
    ],
    [
      'keys that are not an array',
      { trust_domains: { a: { keys: {} } } },
      /^trust_domains\["a"\]\.keys: must be an array \(got object\)$/,
    ],
    [
      'a key of another use',
      { trust_domains: { a: { keys: [{ ...key, use: 'sig' }] } } },
      /^trust_domains\["a"\]\.keys\[0\]\.use: must be "x509-svid" or "jwt-svid" \(got "sig"\)$/,
    ],
    [
      'a key without kty',
      { trust_domains: { a: { keys: [{ use: 'x509-svid', x5c: ['AAAA'] }] } } },
      /^trust_domains\["a"\]\.keys\[0\]\.kty: must be "RSA" or "EC" \(got none\)/,
    ],
    [
      'x5c with two certificates',
      { trust_domains: { a: { keys: [{ ...key, x5c: ['AAAA', 'AAAA'] }] } } },
      /^trust_domains\["a"\]\.keys\[0\]\.x5c: must hold exactly one certificate/,
    ],
    [
      'x5c that is not a certificate',
      { trust_domains: { a: { keys: [key] } } },
      /^trust_domains\["a"\]\.keys\[0\]\.x5c: not a certificate: /,
    ],
    [
      'a negative spiffe_sequence',
      { trust_domains: { a: { spiffe_sequence: -1 } } },
      /^trust_domains\["a"\]\.spiffe_sequence: must be a non-negative integer$/,
    ],
  ];
  for (const [what, json, error] of cases) {
    it(`refuses the whole map for ${what}`, () => assert.match(errorsOf(json), error));
  }
});
