// The `ip:port` addresses an XdsServer binds (gRFC A36 needs an IP, never a name).
import * as net from 'node:net';

/** `ip:port` or `[ipv6]:port` → its parts; undefined for anything else. */
export function parseHostPort(text: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(text);
  if (!match) return undefined;
  const host = match[1] ?? match[2]!;
  const port = Number(match[3]);
  if (net.isIP(host) === 0 || port > 65535) return undefined;
  return { host, port };
}

/** `ip:port`, with an IPv6 address in brackets. */
export function formatHostPort(host: string, port: number): string {
  return net.isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The same IP, however an IPv6 address is written. */
export function sameAddress(a: string, b: string): boolean {
  return (
    a === b ||
    (net.isIP(a) === 6 &&
      net.isIP(b) === 6 &&
      new net.SocketAddress({ address: a, family: 'ipv6' }).address ===
        new net.SocketAddress({ address: b, family: 'ipv6' }).address)
  );
}
