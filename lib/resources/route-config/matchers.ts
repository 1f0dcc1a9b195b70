// RouteMatch validation: path specifier, header matchers, runtime fraction, and the regex check
// every `safe_regex` goes through.
import {
  FractionalPercent_DenominatorType,
  type HeaderMatcher,
  type RegexMatcher,
  type RouteMatch as RouteMatchProto,
  type StringMatcher,
} from '../../generated/protos';
import { int64ToNumber } from '../common';
import { frozenList } from '../../frozen-list';
import { compileSafeRegex } from '../safe-regex';
import type { ValidationErrors } from '../../validation-errors';
import type { HeaderMatch, PathMatch, RouteMatch, StringMatch } from './update';

/**
 * Validates a RegexMatcher at the current path with RE2 itself (re2js): NACKs exactly what RE2
 * refuses (backreferences, lookaround, repeat counts above 1000) and accepts RE2-only syntax
 * (`(?i)`, `\Q…\E`, `[[:alpha:]]`, `\pL`). Returns the pattern, or undefined if invalid.
 */
export function validateRegex(matcher: RegexMatcher, errors: ValidationErrors): string | undefined {
  const compiled = compileSafeRegex(matcher.regex);
  if ('error' in compiled) {
    errors.addAt('regex', `invalid regex: ${compiled.error}`);
    return undefined;
  }
  return matcher.regex;
}

/** Proto oneof member names in snake_case, for messages. */
const PATH_SPECIFIER_NAMES: Record<string, string> = {
  connectMatcher: 'connect_matcher',
  pathSeparatedPrefix: 'path_separated_prefix',
  pathMatchPolicy: 'path_match_policy',
};

function validatePath(match: RouteMatchProto, errors: ValidationErrors): PathMatch {
  switch (match.pathSpecifier) {
    case 'prefix':
      return { type: 'prefix', prefix: match.prefix ?? '' };
    case 'path':
      return { type: 'path', path: match.path ?? '' };
    case 'safeRegex': {
      const regex = errors.field('safe_regex', () => validateRegex(match.safeRegex!, errors));
      return { type: 'safe_regex', regex: regex ?? '' };
    }
    case undefined:
      errors.addAt('path_specifier', 'field not present');
      break;
    default:
      // gRPC C-core and grpc-go both NACK these rather than skip the route: skipping could let
      // RPCs fall through to a later route the operator did not mean them to reach.
      errors.addAt(
        'path_specifier',
        `unsupported value ${PATH_SPECIFIER_NAMES[match.pathSpecifier] ?? match.pathSpecifier}`,
      );
  }
  return { type: 'prefix', prefix: '' };
}

/** Validates a StringMatcher at the current path; undefined when invalid. */
export function validateStringMatcher(
  matcher: StringMatcher,
  errors: ValidationErrors,
): StringMatch | undefined {
  const ignoreCase = matcher.ignoreCase;
  switch (matcher.matchPattern) {
    case 'exact':
    case 'prefix':
    case 'suffix':
    case 'contains':
      return { type: matcher.matchPattern, value: matcher[matcher.matchPattern] ?? '', ignoreCase };
    case 'safeRegex': {
      const regex = errors.field('safe_regex', () => validateRegex(matcher.safeRegex!, errors));
      return regex === undefined ? undefined : { type: 'safe_regex', regex };
    }
    default:
      errors.addAt('match_pattern', 'field not present');
      return undefined;
  }
}

/** Validates a HeaderMatcher at the current path (routes and RBAC); undefined when invalid. */
export function validateHeaderMatcher(
  header: HeaderMatcher,
  errors: ValidationErrors,
): HeaderMatch | undefined {
  // An empty name is accepted, as C-core and grpc-go do: no request has that header, so the
  // matcher sees it absent (issue 20).
  const name = header.name;
  const invert = header.invertMatch;
  const plain = (type: 'exact' | 'prefix' | 'suffix' | 'contains', value: string | null) =>
    ({ name, invert, type, value: value ?? '', ignoreCase: false }) as const;
  switch (header.headerMatchSpecifier) {
    case 'exactMatch':
      return plain('exact', header.exactMatch);
    case 'prefixMatch':
      return plain('prefix', header.prefixMatch);
    case 'suffixMatch':
      return plain('suffix', header.suffixMatch);
    case 'containsMatch':
      return plain('contains', header.containsMatch);
    case 'safeRegexMatch': {
      const regex = errors.field('safe_regex_match', () =>
        validateRegex(header.safeRegexMatch!, errors),
      );
      return regex === undefined ? undefined : { name, invert, type: 'safe_regex', regex };
    }
    case 'rangeMatch': {
      const start = int64ToNumber(header.rangeMatch!.start);
      const end = int64ToNumber(header.rangeMatch!.end);
      // Half-open: start == end matches no value, which inverted is "any value" (C-core
      // accepts it too). Only a reversed range is an error, as in C-core.
      if (start > end) errors.addAt('range_match', 'start must not exceed end');
      return { name, invert, type: 'range', start, end };
    }
    case 'presentMatch':
      return { name, invert, type: 'present', present: header.presentMatch ?? false };
    case 'stringMatch': {
      const match = errors.field('string_match', () =>
        validateStringMatcher(header.stringMatch!, errors),
      );
      return match && { name, invert, ...match };
    }
    default:
      errors.addAt('header_match_specifier', 'field not present');
      return undefined;
  }
}

const PER_MILLION: Record<number, number> = {
  [FractionalPercent_DenominatorType.HUNDRED]: 10_000,
  [FractionalPercent_DenominatorType.TEN_THOUSAND]: 100,
  [FractionalPercent_DenominatorType.MILLION]: 1,
};

function validateRuntimeFraction(
  match: RouteMatchProto,
  errors: ValidationErrors,
): number | undefined {
  return errors.field('runtime_fraction', () => {
    const fraction = match.runtimeFraction!.defaultValue;
    // gRPC has no runtime, so default_value is the whole setting. Envoy requires it; C-core
    // ignores its absence and grpc-go reads it as 0%, so NACK rather than guess.
    if (!fraction) {
      errors.addAt('default_value', 'field not present');
      return undefined;
    }
    const factor = PER_MILLION[fraction.denominator];
    if (factor === undefined) {
      errors.addAt('default_value.denominator', `unsupported value ${fraction.denominator}`);
      return undefined;
    }
    return Math.min(fraction.numerator * factor, 1_000_000);
  });
}

/** Validates `match` (the caller has scoped to it and checked query_parameters). */
export function validateRouteMatch(match: RouteMatchProto, errors: ValidationErrors): RouteMatch {
  const path = validatePath(match, errors);
  const headers: HeaderMatch[] = [];
  match.headers.forEach((header, i) => {
    const h = errors.field('headers', () =>
      errors.index(i, () => validateHeaderMatcher(header, errors)),
    );
    if (h) headers.push(Object.freeze(h));
  });
  const fraction = match.runtimeFraction ? validateRuntimeFraction(match, errors) : undefined;
  return Object.freeze({
    path: Object.freeze(path),
    caseSensitive: match.caseSensitive?.value ?? true,
    headers: frozenList(headers),
    ...(fraction === undefined ? {} : { runtimeFractionPerMillion: fraction }),
  });
}
