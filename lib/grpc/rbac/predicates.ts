// The building blocks of compiled RBAC matchers: a predicate over one request, and the string
// and IP range predicates several matchers use.
import type { StringMatch } from '../../resources/route-config';
import { compileStringMatch } from '../routing/headers';
import { parseIp, prefixMatch, type Ip } from '../server-chains';
import type { RbacRequest } from './request';

/** One compiled matcher: whether a request matches. */
export type Test = (request: RbacRequest) => boolean;

export function stringTest(match: StringMatch): (value: string) => boolean {
  const compiled = compileStringMatch(match);
  if ('error' in compiled) throw new Error(compiled.error);
  return compiled;
}

export function ipTest(
  range: { readonly addressPrefix: string; readonly prefixLen: number },
  address: (request: RbacRequest) => string | undefined,
): Test {
  // Parsed once per address string: connections are few, RPCs many.
  let last: { text: string | undefined; ip: Ip | undefined } = { text: undefined, ip: undefined };
  return (request) => {
    const text = address(request);
    if (text === undefined) return false;
    if (last.text !== text) last = { text, ip: parseIp(text) };
    return last.ip !== undefined && prefixMatch(range, last.ip) >= 0;
  };
}
