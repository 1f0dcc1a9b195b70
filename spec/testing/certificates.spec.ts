// xds-client/testing's certificates are real X.509: OpenSSL parses every one, whatever the
// random serial number and key (a serial starting with a zero byte once made invalid DER, one
// certificate in 256), and a leaf verifies against its CA.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { TestCertificateAuthority } from '../../lib/testing';

describe('test certificates', () => {
  it('are valid DER every time: 2,000 CAs and leaves parse and verify', () => {
    // With one bad serial in 256, 2,000 certificates without one would happen 1 time in 2,500.
    for (let i = 0; i < 1000; i++) {
      const ca = TestCertificateAuthority.create();
      const caCertificate = new X509Certificate(ca.certificate);
      const leaf = new X509Certificate(ca.issue({ dns: ['localhost'] }).certificate);
      assert.ok(leaf.verify(caCertificate.publicKey), `leaf ${i} is signed by its CA`);
      assert.ok(leaf.checkIssued(caCertificate));
    }
  });
});
