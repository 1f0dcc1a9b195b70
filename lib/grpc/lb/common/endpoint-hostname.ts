// An endpoint's hostname, carried on its addresses: EDS's `endpoint.hostname`, or a logical DNS
// cluster's name (host:port). leaf-config.ts marks each address with it, as it marks localities
// (locality-subchannel.ts); grpc-js passes address objects unchanged down to createSubchannel.
// Two features read it: A81's authority rewriting (authority-rewrite.ts: the name as it is) and
// A101's auto_host_sni (certificates/security.ts: the host without its port).
import type { experimental } from '@grpc/grpc-js';

type SubchannelAddress = experimental.SubchannelAddress;
type HostnameAddress = SubchannelAddress & { readonly xdsClientHostname?: string };

/** `address` marked with its endpoint's hostname (a copy); unchanged when there is none. */
export function withHostname(
  address: SubchannelAddress,
  hostname: string | undefined,
): SubchannelAddress {
  return hostname ? ({ ...address, xdsClientHostname: hostname } as HostnameAddress) : address;
}

export function hostnameOf(address: SubchannelAddress): string | undefined {
  return (address as HostnameAddress).xdsClientHostname;
}

/** The host of a `host:port` name (a logical DNS cluster's), without brackets or port. */
export function hostWithoutPort(hostPort: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(hostPort);
  if (bracketed) return bracketed[1]!;
  const colon = hostPort.lastIndexOf(':');
  return colon >= 0 && hostPort.indexOf(':') === colon ? hostPort.slice(0, colon) : hostPort;
}
