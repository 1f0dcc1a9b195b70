// The path condition of a route (gRFC A28): the RPC's `/pkg.Service/Method` against a prefix, an
// exact path or an RE2 pattern.
import { compileSafeRegex, type PathMatch } from '../../resources/route-config';

export type PathTest = (path: string) => boolean;

/**
 * Compiles a path condition, or returns an error text for a regex RE2 refuses (possible only for
 * a virtual host that did not come through our validator).
 *
 * `caseSensitive: false` applies to `prefix` and `path` (ASCII case; method paths are ASCII). It
 * does not apply to `safe_regex`: Envoy documents it as ignored there, and gRPC C-core and
 * grpc-go ignore it too; a pattern that wants it says `(?i)`.
 */
export function compilePathMatch(
  path: PathMatch,
  caseSensitive: boolean,
): PathTest | { readonly error: string } {
  switch (path.type) {
    case 'prefix': {
      if (caseSensitive) {
        const prefix = path.prefix;
        return (p) => p.startsWith(prefix);
      }
      const prefix = path.prefix.toLowerCase();
      return (p) => p.toLowerCase().startsWith(prefix);
    }
    case 'path': {
      if (caseSensitive) {
        const exact = path.path;
        return (p) => p === exact;
      }
      const exact = path.path.toLowerCase();
      return (p) => p.toLowerCase() === exact;
    }
    case 'safe_regex': {
      const compiled = compileSafeRegex(path.regex);
      if ('error' in compiled) return { error: `path: invalid regex: ${compiled.error}` };
      const regex = compiled.regex;
      return (p) => regex.testExact(p);
    }
  }
}
