// IPv4 literals as EDS endpoints carry them, read from their bytes: their value (to claim an
// address without building a string key), whether they are one, and their text.

/** Dotted-quad IPv4, each part 0–255 without leading zeros: what `net.isIP` calls 4. */
export function isIPv4(text: string): boolean {
  return ipv4Value(text) >= 0;
}

/** The 32-bit value of a dotted-quad IPv4 literal (as `isIPv4` accepts it), else -1. */
export function ipv4Value(text: string): number {
  const bytes = Buffer.from(text);
  return ipv4ValueOf(bytes, 0, bytes.length);
}

/**
 * ipv4Value of the UTF-8 text in `bytes` from `start` to `end`: the fast path reads an address
 * from its bytes, before (and instead of, when it is not IPv4) making it a string.
 */
export function ipv4ValueOf(bytes: Uint8Array, start: number, end: number): number {
  let parts = 0;
  let value = 0;
  let digits = 0;
  let ip = 0;
  for (let i = start; i <= end; i++) {
    const c = i < end ? bytes[i]! : 46; // a final '.'
    if (c === 46) {
      if (digits === 0 || ++parts > 4) return -1;
      ip = ip * 256 + value;
      value = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits === 1 && value === 0) return -1; // a leading zero
      value = value * 10 + (c - 48);
      if (++digits > 3 || value > 255) return -1;
    } else {
      return -1;
    }
  }
  return parts === 4 ? ip : -1;
}

/**
 * The key of an IPv4 address (its 32-bit value, from `ipv4Value`) and port in ClaimedAddresses:
 * a number, so that no string is built and hashed per endpoint.
 */
export function ipv4Key(ip: number, port: number): number {
  return ip * 65536 + port;
}

/**
 * The text of an IPv4 literal's bytes, `length` of them from `s` (ipv4ValueOf accepted them: 7
 * to 15 ASCII digits and dots). String.fromCharCode with one argument per byte is a builtin V8
 * inlines; a call into Buffer's UTF-8 decoder cost ~3× as much for strings this short, and was
 * ~30 % of reading an EDS response's endpoints.
 */
export function ipv4Text(b: Uint8Array, s: number, length: number): string {
  const c = String.fromCharCode;
  // prettier-ignore
  switch (length) {
    case 7: return c(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!);
    case 8: return c(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!,
      b[s + 7]!);
    case 9: return c(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!,
      b[s + 7]!, b[s + 8]!);
    case 10: return c(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!,
      b[s + 7]!, b[s + 8]!, b[s + 9]!);
    case 11: return c(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!,
      b[s + 7]!, b[s + 8]!, b[s + 9]!, b[s + 10]!);
    case 12: return c(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!,
      b[s + 7]!, b[s + 8]!, b[s + 9]!, b[s + 10]!, b[s + 11]!);
    case 13: return c(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!,
      b[s + 7]!, b[s + 8]!, b[s + 9]!, b[s + 10]!, b[s + 11]!, b[s + 12]!);
    case 14: return c(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!,
      b[s + 7]!, b[s + 8]!, b[s + 9]!, b[s + 10]!, b[s + 11]!, b[s + 12]!, b[s + 13]!);
    case 15: return c(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!,
      b[s + 7]!, b[s + 8]!, b[s + 9]!, b[s + 10]!, b[s + 11]!, b[s + 12]!, b[s + 13]!, b[s + 14]!);
    default: throw new RangeError(`not an IPv4 literal's length: ${length}`);
  }
}
