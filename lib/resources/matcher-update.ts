// String and header conditions as validated, shared by routes (gRFC A28, A63) and RBAC
// policies (A41). Matching rules: docs/grpc-routing.md.

/** An `envoy.type.matcher.v3.StringMatcher`: a condition on a whole string value. */
export type StringMatch =
  | {
      readonly type: 'exact' | 'prefix' | 'suffix' | 'contains';
      readonly value: string;
      /** From `ignore_case`; a header matcher's legacy `*_match` fields are case-sensitive. */
      readonly ignoreCase: boolean;
    }
  /** The whole value must match `regex`, an RE2 pattern (checked by validation). */
  | { readonly type: 'safe_regex'; readonly regex: string };

/** A request-header condition; `invert` negates the result (A28, A63 `string_match`). */
export type HeaderMatch = {
  readonly name: string;
  readonly invert: boolean;
} & (
  | StringMatch
  /** The header parses as an integer in [start, end). Exact up to 2^53. */
  | { readonly type: 'range'; readonly start: number; readonly end: number }
  /** The header is present (`present: true`) or absent (`present: false`). */
  | { readonly type: 'present'; readonly present: boolean }
);
