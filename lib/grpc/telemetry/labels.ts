// The values of A66's labels: `grpc.target` (the channel's target in canonical form),
// `grpc.method` (the full method name, `other` for a server method nobody registered) and
// `grpc.status` (the status code's name).
import { status } from '@grpc/grpc-js';

/** Schemes grpc-js resolves; any other target is a DNS name (grpc-js's default scheme). */
const KNOWN_SCHEMES = new Set(['dns', 'ipv4', 'ipv6', 'unix', 'unix-abstract', 'xds']);

/**
 * A66's canonical target, `scheme://[authority]/path`: `xds:///svc` stays, `localhost:50051`
 * becomes `dns:///localhost:50051` as grpc-js resolves it.
 */
export function canonicalTarget(target: string): string {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):(?:\/\/([^/]*)\/)?(.*)$/.exec(target);
  if (match && KNOWN_SCHEMES.has(match[1]!.toLowerCase())) {
    const [, scheme, authority, path] = match;
    return `${scheme!.toLowerCase()}://${authority ?? ''}/${path}`;
  }
  return `dns:///${target}`;
}

/** A66's `grpc.method`: `pkg.Service/Method`, from grpc-js's path `/pkg.Service/Method`. */
export function methodLabel(path: string): string {
  return path.startsWith('/') ? path.slice(1) : path;
}

/**
 * A78's `grpc.lb.locality`: `{region="…", zone="…", sub_zone="…"}`, as C-core writes it; ''
 * for an endpoint with no locality (a LOGICAL_DNS cluster's).
 */
export function localityLabel(
  l: { readonly region: string; readonly zone: string; readonly subZone: string } | undefined,
): string {
  return l ? `{region="${l.region}", zone="${l.zone}", sub_zone="${l.subZone}"}` : '';
}

/** The value recorded for a server method with no handler (A66). */
export const OTHER_METHOD = 'other';

const STATUS_NAMES: readonly string[] = (() => {
  const names: string[] = [];
  for (let code = 0; code <= 16; code++) names.push(status[code] ?? String(code));
  return names;
})();

/** A66's `grpc.status`: `OK`, `DEADLINE_EXCEEDED`… (the number itself for an unknown code). */
export function statusLabel(code: number): string {
  return STATUS_NAMES[code] ?? String(code);
}
