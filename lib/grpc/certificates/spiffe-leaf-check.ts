// The SPIFFE check on each RPC (gRFC A87's server side, where XdsServer cannot check the
// connection: decision 0044), remembered per client certificate: its parse, and that it passed
// against a given trust bundle map. An RPC on a connection already checked then parses no X.509
// and verifies no signature. A pass holds until the bundle map changes (a new map object) or the
// leaf or a root of the map stops being valid; a refusal is not remembered (the connection's
// next RPC checks again, as a certificate not yet valid may become so).
import { X509Certificate } from 'node:crypto';
import type { SpiffeBundleMap } from '../../client/credentials/spiffe-bundle-map';
import { PeerCertificateCache, type PeerCertificateLike } from './peer-certificate-cache';
import { spiffeVerificationFailure } from './spiffe-verification';

/** Client certificates remembered; a server with more clients parses the others per RPC. */
const LEAF_CACHE_SIZE = 1024;

interface Leaf {
  readonly certificate: X509Certificate;
  /** The map it last passed against, and until when (ms since the epoch) that pass holds. */
  passed?: { readonly map: SpiffeBundleMap; readonly until: number } | undefined;
}

export class SpiffeLeafCheck {
  private readonly leaves = new PeerCertificateCache<Leaf>(LEAF_CACHE_SIZE);

  /** Why `certificate`'s client is refused against `map` (the leaf only), or undefined. */
  refusal(certificate: PeerCertificateLike, map: SpiffeBundleMap): string | undefined {
    const leaf = this.leaves.get(certificate, (raw) => ({ certificate: new X509Certificate(raw) }));
    const now = Date.now();
    if (leaf.passed?.map === map && now < leaf.passed.until) return undefined;
    const failure = spiffeVerificationFailure([leaf.certificate], map, new Date(now));
    leaf.passed =
      failure === undefined ? { map, until: passHolds(leaf.certificate, map, now) } : undefined;
    return failure;
  }
}

/**
 * A pass holds while the leaf and the roots of `map` valid now all stay valid: the root it
 * chained to is one of those (a margin of caution: another root's end checks again).
 */
function passHolds(leaf: X509Certificate, map: SpiffeBundleMap, now: number): number {
  let until = Date.parse(leaf.validTo);
  for (const roots of map.values()) {
    for (const root of roots) {
      const end = Date.parse(root.validTo);
      if (end > now) until = Math.min(until, end);
    }
  }
  return until;
}
