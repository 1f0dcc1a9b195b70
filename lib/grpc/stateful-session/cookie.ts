// The session cookie of gRFC A55 and A60, as C-core writes and reads it: the value is the
// base64 of `<endpoint addresses>;<cluster>` (addresses `host:port`, joined by commas), read
// from the request's `cookie` metadata and set with `set-cookie` on the response as
// `name=value; HttpOnly[; Path=path][; Max-Age=seconds]`.

import type { Metadata } from '@grpc/grpc-js';
import type { SessionCookie } from '../../resources/stateful-session';

/** What a session cookie says: where the session's RPCs went. */
export interface CookieSession {
  /** The endpoint's addresses, `host:port` joined by commas; '' when the cookie named none. */
  readonly addresses: string;
  /** The cluster (A60); '' when the cookie named none. */
  readonly cluster: string;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The first cookie named `name` in the request's `cookie` metadata, decoded; undefined when
 * there is none or its value is not base64 (the RPC then goes as if it had no cookie).
 */
export function readSessionCookie(metadata: Metadata, name: string): CookieSession | undefined {
  for (const header of metadata.get('cookie')) {
    if (typeof header !== 'string') continue;
    for (const pair of header.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
      return decode(pair.slice(eq + 1).trim());
    }
  }
  return undefined;
}

function decode(value: string): CookieSession | undefined {
  // A quoted value (as Envoy's documentation shows it) is read without its quotes.
  const bare =
    value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  if (!BASE64.test(bare)) return undefined;
  const text = Buffer.from(bare, 'base64').toString('utf8');
  const semicolon = text.indexOf(';');
  return semicolon < 0
    ? { addresses: text, cluster: '' }
    : { addresses: text.slice(0, semicolon), cluster: text.slice(semicolon + 1) };
}

/** The `set-cookie` value naming `addresses` of `cluster`. */
export function setCookieValue(cookie: SessionCookie, addresses: string, cluster: string): string {
  const value = Buffer.from(`${addresses};${cluster}`, 'utf8').toString('base64');
  const parts = [`${cookie.name}=${value}`, 'HttpOnly'];
  if (cookie.path !== '') parts.push(`Path=${cookie.path}`);
  if (cookie.ttlSeconds > 0) parts.push(`Max-Age=${cookie.ttlSeconds}`);
  return parts.join('; ');
}

/**
 * RFC 6265 section 5.1.4 path-match of the RPC's path (`/package.Service/Method`) against the
 * cookie's path; an unset path matches every RPC.
 */
export function pathMatches(cookiePath: string, rpcPath: string): boolean {
  if (cookiePath === '') return true;
  if (!rpcPath.startsWith(cookiePath)) return false;
  return (
    rpcPath.length === cookiePath.length ||
    cookiePath.endsWith('/') ||
    rpcPath[cookiePath.length] === '/'
  );
}
