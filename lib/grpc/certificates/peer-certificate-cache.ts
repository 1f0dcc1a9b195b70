// What the server derives from a client certificate (RBAC's peer identity, the SPIFFE check's
// parse and verdict), kept per certificate so that an RPC on a connection already seen parses no
// X.509. The certificate object cannot be the key: grpc-js asks Node for the peer certificate on
// each RPC, and Node builds a new object (and a new DER Buffer) each time. The key is the
// certificate's SHA-256 fingerprint, which Node computes with that object, and a hit is confirmed
// by comparing the DER, so that even a fingerprint collision cannot hand one certificate's
// identity to another. Bounded: when full, the entry used least recently goes.
import { createHash } from 'node:crypto';

/** A peer certificate as Node's `getPeerCertificate()` gives it (`raw`: the DER). */
export interface PeerCertificateLike {
  readonly raw: Buffer;
  /** `AB:CD:…`, as Node formats it; computed here when absent. */
  readonly fingerprint256?: string | undefined;
}

interface Entry<T> {
  readonly raw: Buffer;
  readonly value: T;
}

export class PeerCertificateCache<T> {
  /** In order of use, least recent first (a Map keeps insertion order). */
  private readonly entries = new Map<string, Entry<T>>();

  constructor(private readonly capacity: number) {}

  /** The value for `certificate`: derived from its DER by `derive` once, then remembered. */
  get(certificate: PeerCertificateLike, derive: (raw: Buffer) => T): T {
    const key = certificate.fingerprint256 || fingerprintOf(certificate.raw);
    const entry = this.entries.get(key);
    if (entry?.raw.equals(certificate.raw)) {
      this.entries.delete(key);
      this.entries.set(key, entry);
      return entry.value;
    }
    const value = derive(certificate.raw);
    this.entries.delete(key);
    this.entries.set(key, { raw: certificate.raw, value });
    if (this.entries.size > this.capacity) {
      this.entries.delete(this.entries.keys().next().value!);
    }
    return value;
  }
}

function fingerprintOf(raw: Buffer): string {
  return createHash('sha256').update(raw).digest('hex');
}
