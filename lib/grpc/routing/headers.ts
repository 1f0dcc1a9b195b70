// Header conditions of a route (gRFC A28, A63), compiled once per virtual host and evaluated on
// every RPC against the call's metadata. The rules for absent headers and `invert_match` are the
// ones Envoy, gRPC C-core and grpc-go share; docs/grpc-routing.md lists them.
import type { Metadata } from '@grpc/grpc-js';
import { compileSafeRegex, type HeaderMatch, type StringMatch } from '../../resources/route-config';

/** A compiled header condition: true when the RPC's metadata satisfies it. */
export type HeaderTest = (metadata: Metadata) => boolean;

/**
 * grpc-js adds `content-type` after the ConfigSelector runs, so the selector never sees it in the
 * metadata; every gRPC implementation matches it as this value.
 */
const GRPC_CONTENT_TYPE = 'application/grpc';

/**
 * The value a matcher sees for `name` (lower-case): the call's values joined with ',', or
 * undefined when the header counts as absent. Ring-hash header policies read headers the same
 * way (gRFC A42).
 */
export function headerValue(metadata: Metadata, name: string): string | undefined {
  // Binary headers are hard to match meaningfully, so gRPC treats them as never sent.
  // Pseudo-headers (`:authority`, …) are not metadata; grpc-js cannot carry them here anyway.
  if (name.endsWith('-bin') || name.startsWith(':')) return undefined;
  if (name === 'content-type') return GRPC_CONTENT_TYPE;
  const values = metadata.get(name);
  if (values.length === 0) return undefined;
  // Non-binary values are strings; anything else got in by bypassing Metadata's checks.
  return values.map((v) => (typeof v === 'string' ? v : String(v))).join(',');
}

/** `ignore_case` compares ASCII case-insensitively; header values are printable ASCII. */
function stringTest(
  type: 'exact' | 'prefix' | 'suffix' | 'contains',
  expected: string,
  ignoreCase: boolean,
): (value: string) => boolean {
  const want = ignoreCase ? expected.toLowerCase() : expected;
  const fold = ignoreCase ? (v: string) => v.toLowerCase() : (v: string) => v;
  switch (type) {
    case 'exact':
      return (v) => fold(v) === want;
    case 'prefix':
      return (v) => fold(v).startsWith(want);
    case 'suffix':
      return (v) => fold(v).endsWith(want);
    case 'contains':
      return (v) => fold(v).includes(want);
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** [start, end) on a base-10 int64 (optional sign, digits only); anything else is out of range. */
function rangeTest(start: number, end: number): (value: string) => boolean {
  // Validation gives whole numbers, rounded beyond 2^53; BigInt keeps large values exact.
  const low = BigInt(start);
  const high = BigInt(end);
  return (v) => {
    if (!/^[+-]?[0-9]+$/.test(v)) return false;
    const n = BigInt(v);
    return n >= INT64_MIN && n <= INT64_MAX && n >= low && n < high;
  };
}

/**
 * Compiles a string condition (`exact`, `prefix`, `suffix`, `contains`, `safe_regex`), or returns
 * an error text for a regex RE2 refuses (a config that did not come through our validator).
 */
export function compileStringMatch(
  match: StringMatch,
): ((value: string) => boolean) | { readonly error: string } {
  if (match.type !== 'safe_regex') return stringTest(match.type, match.value, match.ignoreCase);
  const compiled = compileSafeRegex(match.regex);
  if ('error' in compiled) return { error: `invalid regex: ${compiled.error}` };
  const regex = compiled.regex;
  return (v) => regex.testExact(v);
}

/**
 * Compiles one header condition of a route, or returns an error text (a regex RE2 refuses, a
 * range that is not whole numbers) for a virtual host that did not come through our validator.
 */
export function compileHeaderMatch(header: HeaderMatch): HeaderTest | { readonly error: string } {
  return compileHeaderCondition(header, headerValue);
}

/**
 * Compiles one header condition over any request representation: `read(source, name)` gives the
 * value a matcher sees for the lower-case `name`, or undefined when the header counts as absent.
 * Routes read the call's metadata (`headerValue`); RBAC reads its own view (gRFC A41).
 */
export function compileHeaderCondition<S>(
  header: HeaderMatch,
  read: (source: S, name: string) => string | undefined,
): ((source: S) => boolean) | { readonly error: string } {
  // Metadata keys are lower-case in grpc-js, and HTTP header names are case-insensitive.
  const name = header.name.toLowerCase();
  const invert = header.invert;
  if (header.type === 'present') {
    // The one kind that can match an absent header: `present_match: false`, or `true` inverted.
    const wantPresent = header.present !== invert;
    return (source) => (read(source, name) !== undefined) === wantPresent;
  }
  let test: (value: string) => boolean;
  if (header.type === 'range') {
    if (!Number.isInteger(header.start) || !Number.isInteger(header.end)) {
      return { error: `header "${name}": range bounds must be integers` };
    }
    test = rangeTest(header.start, header.end);
  } else {
    const compiled = compileStringMatch(header);
    if ('error' in compiled) return { error: `header "${name}": ${compiled.error}` };
    test = compiled;
  }
  return (source) => {
    const value = read(source, name);
    // An absent header matches no value condition, inverted or not (Envoy, C-core, grpc-go).
    if (value === undefined) return false;
    return test(value) !== invert;
  };
}
