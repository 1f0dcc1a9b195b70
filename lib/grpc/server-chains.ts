// Which filter chain of a server-side Listener a connection uses (gRFC A36): the most specific
// destination prefix, then source type, then the most specific source prefix, then source port;
// exactly one chain left wins, none falls back to the default chain, else the connection is
// refused. Pure.
import { isIP } from 'node:net';
import type {
  CidrRangeConfig,
  ServerFilterChain,
  ServerListenerConfig,
} from '../resources/listener/update';

export interface ConnectionAddresses {
  readonly localAddress: string;
  readonly remoteAddress: string;
  readonly remotePort: number;
}

/** An IP address as a family and a 128- or 32-bit number; IPv4-mapped IPv6 counts as IPv4. */
export interface Ip {
  readonly bits: 32 | 128;
  readonly value: bigint;
}

export function parseIp(text: string): Ip | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(text);
  if (mapped) return parseIp(mapped[1]!);
  const family = isIP(text);
  if (family === 4) {
    let value = 0n;
    for (const part of text.split('.')) value = (value << 8n) | BigInt(Number(part));
    return { bits: 32, value };
  }
  if (family !== 6) return undefined;
  let head = text.split('%')[0]!;
  let tail4: bigint[] = [];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(head);
  if (v4) {
    const n = parseIp(v4[1]!)!.value;
    tail4 = [n >> 16n, n & 0xffffn];
    head = head.slice(0, -v4[1]!.length);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const [left, right] = head.includes('::') ? head.split('::') : [head, undefined];
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => BigInt(`0x${g}`)) : []);
  const l = groups(left);
  const r = [...groups(right), ...tail4];
  const fill =
    right === undefined && !head.includes('::') ? [] : Array(8 - l.length - r.length).fill(0n);
  let value = 0n;
  for (const g of [...l, ...fill, ...r]) value = (value << 16n) | g;
  return { bits: 128, value };
}

/** The prefix length if `ip` is in `range`, else -1. */
export function prefixMatch(range: CidrRangeConfig, ip: Ip): number {
  const net = parseIp(range.addressPrefix);
  if (!net || net.bits !== ip.bits) return -1;
  const shift = BigInt(net.bits - range.prefixLen);
  return net.value >> shift === ip.value >> shift ? range.prefixLen : -1;
}

/** Keeps the chains scoring highest; a score below 0 drops a chain. */
function best<T>(items: readonly T[], score: (item: T) => number): T[] {
  let top = -1;
  let kept: T[] = [];
  for (const item of items) {
    const s = score(item);
    if (s < 0 || s < top) continue;
    if (s > top) {
      top = s;
      kept = [];
    }
    kept.push(item);
  }
  return kept;
}

/** Longest matching prefix among `ranges`; 0 for none listed (matches everything). */
function rangesScore(ranges: readonly CidrRangeConfig[], ip: Ip | undefined): number {
  if (ranges.length === 0) return 0;
  if (!ip) return -1;
  let top = -1;
  for (const range of ranges) {
    const len = prefixMatch(range, ip);
    // A listed range beats no ranges at all, even a /0 one.
    if (len >= 0) top = Math.max(top, len + 1);
  }
  return top;
}

function isLoopback(ip: Ip | undefined): boolean {
  if (!ip) return false;
  return ip.bits === 32 ? ip.value >> 24n === 127n : ip.value === 1n;
}

/** The chain for a connection, or undefined when it must be refused. */
export function selectFilterChain(
  listener: ServerListenerConfig,
  connection: ConnectionAddresses,
): ServerFilterChain | undefined {
  const local = parseIp(connection.localAddress);
  const remote = parseIp(connection.remoteAddress);
  let chains = best(listener.filterChains, (c) => rangesScore(c.match.destinationPrefixes, local));
  const sameOrLoopback =
    isLoopback(remote) ||
    (local !== undefined &&
      remote !== undefined &&
      local.bits === remote.bits &&
      local.value === remote.value);
  chains = best(chains, (c) => {
    switch (c.match.sourceType) {
      case 'any':
        return 0;
      case 'same_ip_or_loopback':
        return sameOrLoopback ? 1 : -1;
      default:
        return sameOrLoopback ? -1 : 1;
    }
  });
  chains = best(chains, (c) => rangesScore(c.match.sourcePrefixes, remote));
  chains = best(chains, (c) => {
    const ports = c.match.sourcePorts;
    if (ports.length === 0) return 0;
    return ports.includes(connection.remotePort) ? 1 : -1;
  });
  // Validation refuses overlapping chains, so more than one left cannot happen; be safe.
  if (chains.length === 1) return chains[0];
  return chains.length === 0 ? listener.defaultFilterChain : undefined;
}
