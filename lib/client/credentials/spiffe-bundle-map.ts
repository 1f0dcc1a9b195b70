// gRFC A87's SPIFFE trust bundle map: the file a `file_watcher` provider's
// `spiffe_trust_bundle_map_file` names, `{"trust_domains": {"<domain>": <SPIFFE bundle>}}`, each
// bundle a JWK set whose `x509-svid` keys carry one root certificate each in `x5c` (base64 DER).
// As A87 asks, only `keys` and `spiffe_sequence` of a bundle and `kty`, `use` and `x5c` of a key
// are read, and any invalid entry refuses the whole file (the last good map stays in use).
import { X509Certificate } from 'node:crypto';
import { isObject, mustBe, own } from '../../bootstrap/json';
import { ValidationErrors } from '../../validation-errors';

/** Trust domain → the root certificates peers of that domain are verified against. */
export type SpiffeBundleMap = ReadonlyMap<string, readonly X509Certificate[]>;

/** SPIFFE-ID.md's trust domain name: lower-case letters, digits, `.`, `-` and `_`. */
export const TRUST_DOMAIN = /^[a-z0-9._-]+$/;

/** The map in `text`, or the problems found, each at its JSON path (`trust_domains["a"].keys[0].x5c`). */
export function parseSpiffeBundleMap(text: string): SpiffeBundleMap | { readonly errors: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { errors: `not JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  const errs = new ValidationErrors();
  const map = new Map<string, X509Certificate[]>();
  const domains = isObject(json) ? own(json, 'trust_domains') : undefined;
  if (!isObject(json)) errs.add(mustBe('a JSON object', json));
  else if (domains === undefined) errs.addAt('trust_domains', 'field not present');
  else if (!isObject(domains)) errs.addAt('trust_domains', mustBe('an object', domains));
  else {
    for (const [domain, bundle] of Object.entries(domains)) {
      errs.field(`trust_domains[${JSON.stringify(domain)}]`, () => {
        if (!TRUST_DOMAIN.test(domain)) {
          errs.add('is not a SPIFFE trust domain (lower-case letters, digits, ".", "-", "_")');
        }
        map.set(domain, roots(errs, bundle));
      });
    }
  }
  if (!errs.isEmpty) {
    return {
      errors: errs
        .list()
        .map((e) => (e.path ? `${e.path}: ${e.message}` : e.message))
        .join('; '),
    };
  }
  return map;
}

/** A bundle's X.509 roots; `jwt-svid` keys are for JWT SVIDs and are skipped. */
function roots(errs: ValidationErrors, bundle: unknown): X509Certificate[] {
  const found: X509Certificate[] = [];
  if (!isObject(bundle)) {
    errs.add(mustBe('an object', bundle));
    return found;
  }
  const sequence = own(bundle, 'spiffe_sequence');
  if (sequence !== undefined && !(Number.isSafeInteger(sequence) && (sequence as number) >= 0)) {
    errs.addAt('spiffe_sequence', 'must be a non-negative integer');
  }
  const keys = own(bundle, 'keys');
  if (keys === undefined) return found;
  if (!Array.isArray(keys)) {
    errs.addAt('keys', mustBe('an array', keys));
    return found;
  }
  errs.field('keys', () =>
    keys.forEach((key: unknown, i) =>
      errs.index(i, () => {
        const root = x509Root(errs, key);
        if (root) found.push(root);
      }),
    ),
  );
  return found;
}

function x509Root(errs: ValidationErrors, key: unknown): X509Certificate | undefined {
  if (!isObject(key)) {
    errs.add(mustBe('an object', key));
    return undefined;
  }
  const use = own(key, 'use');
  if (use === 'jwt-svid') return undefined;
  if (use !== 'x509-svid') {
    errs.addAt('use', `must be "x509-svid" or "jwt-svid" (got ${JSON.stringify(use) ?? 'none'})`);
    return undefined;
  }
  const kty = own(key, 'kty');
  if (kty !== 'RSA' && kty !== 'EC') {
    errs.addAt('kty', `must be "RSA" or "EC" (got ${JSON.stringify(kty) ?? 'none'})`);
  }
  const x5c = own(key, 'x5c');
  if (!Array.isArray(x5c) || x5c.length !== 1 || typeof x5c[0] !== 'string') {
    errs.addAt('x5c', 'must hold exactly one certificate (base64 DER)');
    return undefined;
  }
  try {
    return new X509Certificate(Buffer.from(x5c[0], 'base64'));
  } catch (e) {
    errs.addAt('x5c', `not a certificate: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  }
}
