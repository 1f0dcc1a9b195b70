// The one place a control-plane regex (`safe_regex`, `regex_rewrite`) is compiled: with re2js, a
// pure-JS port of RE2 (decision 0012). Validation and matching share it, so what we NACK is
// exactly what RE2 rejects, and what we accept matches in linear time on every RPC.
// re2js is loaded by the first compile, not at import: most processes never see a regex.
import type * as Re2js from 're2js';

let re2js: typeof Re2js | undefined;
const library = (): typeof Re2js => (re2js ??= require('re2js') as typeof Re2js);

/**
 * A compiled RE2 pattern. Match a whole value with `testExact(value)` (xDS `safe_regex` is a
 * full match); `matcher(value).replaceAll(…)` serves `regex_rewrite`.
 */
export type CompiledRegex = Re2js.RE2JS;

/**
 * Compiles an xDS RE2 pattern, or says why RE2 refuses it. The pattern is compiled as sent, never
 * wrapped in anchors: `testExact` gives full-match semantics, and wrapping would change what
 * `a)|(b` means.
 */
export function compileSafeRegex(
  pattern: string,
): { readonly regex: CompiledRegex } | { readonly error: string } {
  try {
    return { regex: library().RE2JS.compile(pattern) };
  } catch (e) {
    return { error: describeError(e) };
  }
}

/** RE2's own words (`missing closing ): \`/svc/(\``), plus a hint for what JS users expect. */
function describeError(e: unknown): string {
  if (!(e instanceof library().RE2JSSyntaxException))
    return e instanceof Error ? e.message : String(e);
  const description = e.getDescription();
  const where = e.getPattern() ?? '';
  return `${description}: \`${where}\`${hintFor(description, where)}`;
}

function hintFor(description: string, where: string): string {
  if (/^\(\?(=|!|<=|<!)/.test(where)) return ' (RE2 has no lookaround)';
  if (description === 'invalid escape sequence' && /^\\([1-9]|k)/.test(where)) {
    return ' (RE2 has no backreferences)';
  }
  if (description === 'invalid repeat count') return ' (RE2 allows at most 1000 repetitions)';
  return '';
}
