// The server's per-certificate cache (what RBAC and the SPIFFE check derive from a client
// certificate): derived once per certificate, bounded, the least recently used entry dropped.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PeerCertificateCache } from '../../lib/grpc/certificates/peer-certificate-cache';

describe('per-certificate cache of the server', () => {
  it('derives once per certificate and, when full, forgets the least recently used', () => {
    const derived: string[] = [];
    const cache = new PeerCertificateCache<string>(2);
    const get = (der: string) =>
      cache.get({ raw: Buffer.from(der) }, (raw) => {
        derived.push(raw.toString());
        return `value of ${raw.toString()}`;
      });
    assert.equal(get('a'), 'value of a');
    get('b');
    get('a');
    get('c'); // full: b, the least recently used, goes
    get('a');
    get('b');
    assert.deepEqual(derived, ['a', 'b', 'c', 'b']);
  });
});
