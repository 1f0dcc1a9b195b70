// Resource names of gRFC A47: old-style names (`listener.example.com`) go to the top-level
// servers; `xdstp://authority/type/id?params` names go to their authority's servers, with
// their context parameters sorted so that equal names compare equal.

export interface ParsedResourceName {
  /** `undefined` for an old-style name. */
  readonly authority: string | undefined;
  /** The name as sent on the wire and used as the cache key. */
  readonly canonical: string;
}

const XDSTP = 'xdstp:';

/**
 * The cache key of a name: `parseResourceName(name).canonical`, without making the parsed name
 * for an old-style one (a response names thousands).
 */
export function canonicalName(name: string): string {
  return name.startsWith(XDSTP) ? parseResourceName(name).canonical : name;
}

export function parseResourceName(name: string): ParsedResourceName {
  if (!name.startsWith(XDSTP)) return { authority: undefined, canonical: name };
  let url: URL;
  try {
    url = new URL(name);
  } catch {
    return { authority: undefined, canonical: name };
  }
  const params = [...url.searchParams.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const query = params.length
    ? '?' + params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')
    : '';
  return {
    authority: safeDecode(url.host),
    canonical: `${XDSTP}//${url.host}${url.pathname}${query}`,
  };
}

/** A malformed %-escape is left as it is: the name then matches no authority, never throws. */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
