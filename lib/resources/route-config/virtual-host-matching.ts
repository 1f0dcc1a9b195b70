// Virtual-host selection by domain (gRFC A28, Envoy's rules). Pure; used by validation (to
// reject malformed patterns) and by whoever routes RPCs (to pick the virtual host).
import type { VirtualHost } from './update';

/** Better kinds sort first; within a kind, a longer pattern is more specific. */
const enum DomainKind {
  Exact = 0,
  /** `*.foo.com`, `*-bar.foo.com`: the `*` stands for one or more leading characters. */
  Suffix = 1,
  /** `foo.*`: the `*` stands for one or more trailing characters. */
  Prefix = 2,
  /** `*` alone. */
  Universal = 3,
  Invalid = 4,
}

function domainKind(pattern: string): DomainKind {
  if (pattern === '') return DomainKind.Invalid;
  if (pattern === '*') return DomainKind.Universal;
  const star = pattern.indexOf('*');
  if (star < 0) return DomainKind.Exact;
  // At most one `*`, and only at one end.
  if (star !== pattern.lastIndexOf('*')) return DomainKind.Invalid;
  if (star === 0) return DomainKind.Suffix;
  if (star === pattern.length - 1) return DomainKind.Prefix;
  return DomainKind.Invalid;
}

/** A pattern gRPC C-core accepts: non-empty, with at most one `*`, at its start or end. */
export function isValidDomainPattern(pattern: string): boolean {
  return domainKind(pattern) !== DomainKind.Invalid;
}

function matches(kind: DomainKind, pattern: string, host: string): boolean {
  switch (kind) {
    case DomainKind.Exact:
      return host === pattern;
    // The wildcard must cover at least one character (Envoy and C-core; grpc-go allows none).
    case DomainKind.Suffix:
      return host.length >= pattern.length && host.endsWith(pattern.slice(1));
    case DomainKind.Prefix:
      return host.length >= pattern.length && host.startsWith(pattern.slice(0, -1));
    case DomainKind.Universal:
      return true;
    default:
      return false;
  }
}

/**
 * The virtual host whose domains best match `authority` (the data-plane target's host, with its
 * port if it has one): an exact match beats a suffix wildcard (`*.foo.com`), which beats a prefix
 * wildcard (`foo.*`), which beats `*`; among wildcards of one kind the longest pattern wins; a
 * tie goes to the earlier virtual host. Comparison ignores ASCII case (host names do). Undefined
 * when nothing matches: the RPCs then fail (A28).
 */
export function findVirtualHost<V extends Pick<VirtualHost, 'domains'>>(
  virtualHosts: readonly V[],
  authority: string,
): V | undefined {
  const host = authority.toLowerCase();
  let best: V | undefined;
  let bestKind = DomainKind.Invalid;
  let bestLength = -1;
  for (const vh of virtualHosts) {
    for (const domain of vh.domains) {
      const pattern = domain.toLowerCase();
      const kind = domainKind(pattern);
      if (kind > bestKind || (kind === bestKind && pattern.length <= bestLength)) continue;
      if (!matches(kind, pattern, host)) continue;
      if (kind === DomainKind.Exact) return vh;
      best = vh;
      bestKind = kind;
      bestLength = pattern.length;
    }
  }
  return best;
}
