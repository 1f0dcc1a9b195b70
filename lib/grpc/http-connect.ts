// gRFC A86: reaching an endpoint through the HTTP CONNECT proxy its EDS metadata names. The
// cluster policy marks each endpoint address with its proxy (as it marks the locality); when the
// Cluster's transport socket is Http11ProxyUpstreamTransport, cluster_impl flags the
// subchannel, and the root policy (cluster_manager, above grpc-js's outlier_detection, which
// knows endpoints by address) creates it for the proxy's address, with grpc-js's own
// `grpc.http_connect_target` channel argument naming the endpoint. grpc-js's connector then opens a TCP connection to the proxy,
// sends `CONNECT <endpoint ip:port>`, and runs TLS (when the credentials have it) and HTTP/2
// inside the tunnel. Decision 0056 explains the mechanism.

import type { ChannelOptions, experimental } from '@grpc/grpc-js';
import type { EndpointAddress } from '../resources/endpoint';
import { HTTP_CONNECT_OPTION } from './names';

type SubchannelAddress = experimental.SubchannelAddress;

/** grpc-js's channel arguments for a proxied connection (http_proxy.ts, transport.ts). */
const CONNECT_TARGET_ARG = 'grpc.http_connect_target';
const CONNECT_CREDS_ARG = 'grpc.http_connect_creds';

/** An address marked with its endpoint's proxy. */
type ProxiedAddress = SubchannelAddress & { readonly xdsClientHttpProxy?: EndpointAddress };

/** `address` marked with `proxy` (a copy); `address` itself without one. */
export function withHttpProxy(
  address: SubchannelAddress,
  proxy: EndpointAddress | undefined,
): SubchannelAddress {
  return proxy ? ({ ...address, xdsClientHttpProxy: proxy } as ProxiedAddress) : address;
}

/**
 * What to create the subchannel for `address` with, at the root policy: when cluster_impl set
 * HTTP_CONNECT_OPTION and the address is marked with a proxy, the proxy's address and arguments
 * that make grpc-js CONNECT through it to `address`; otherwise `address`, and `args` without
 * the option.
 */
export function throughHttpProxy(
  address: SubchannelAddress,
  args: ChannelOptions,
): { address: SubchannelAddress; args: ChannelOptions } {
  if (!args[HTTP_CONNECT_OPTION]) return { address, args };
  const { [HTTP_CONNECT_OPTION]: _flag, ...unflagged } = args;
  const proxy = (address as ProxiedAddress).xdsClientHttpProxy;
  if (!proxy || !('host' in address)) return { address, args: unflagged };
  // Proxy credentials a process-wide http_proxy setting may have put in the channel's
  // arguments are for that proxy, not this one.
  const { [CONNECT_CREDS_ARG]: _creds, ...rest } = unflagged;
  return {
    address: { host: proxy.address, port: proxy.port },
    args: { ...rest, [CONNECT_TARGET_ARG]: `dns:///${hostPort(address.host, address.port)}` },
  };
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
