// gRFC A81's authority rewriting, in grpc-js. An RPC's :authority is the `host` grpc-js hands to
// the subchannel's createCall once the pick is made; a picker cannot set it. So the subchannel a
// picker returns does it: for an RPC whose route has `auto_host_rewrite`, the root policy
// (cluster_manager) hands grpc-js a wrapper whose real subchannel creates the call with the
// endpoint's hostname instead of the channel's authority (decision 0051).
//
// The hostname rides on the address objects, as the locality does (locality-subchannel.ts):
// leaf-config.ts marks each address with its endpoint's hostname (endpoint-hostname.ts), and cluster_manager's helper wraps every subchannel created for a marked
// address in a HostnameSubchannel. Wrappers below it (cluster_impl's, outlier detection's)
// unwrap down to it, so the root's picker sees it, and unwraps it in turn.

import { experimental } from '@grpc/grpc-js';
import { hostnameOf } from './endpoint-hostname';
import { SubchannelWrapper } from './subchannel-wrapper';

type SubchannelAddress = experimental.SubchannelAddress;
type SubchannelInterface = experimental.SubchannelInterface;
type RealSubchannel = ReturnType<SubchannelInterface['getRealSubchannel']>;

/** The subchannel for `address`, wrapped when the address carries a hostname. */
export function withHostnameOf(
  subchannel: SubchannelInterface,
  address: SubchannelAddress,
): SubchannelInterface {
  const hostname = hostnameOf(address);
  return hostname ? new HostnameSubchannel(subchannel, hostname) : subchannel;
}

/**
 * A completed pick as grpc-js must get it: our wrapper taken off, and, when `authority` is set
 * (the channel's own authority, from a route with auto_host_rewrite), a subchannel that sends
 * the endpoint's hostname in its place.
 */
export function rewriteAuthority(
  result: experimental.PickResult,
  authority: string | undefined,
): experimental.PickResult {
  const picked = result.subchannel;
  if (!(picked instanceof HostnameSubchannel)) return result;
  const subchannel = authority === undefined ? picked.unwrap() : picked.rewriting(authority);
  return { ...result, subchannel };
}

class HostnameSubchannel extends SubchannelWrapper {
  /** The rewriting subchannel, made once per channel authority (one per channel in practice). */
  private rewriter: AuthorityRewritingSubchannel | undefined;

  constructor(
    child: SubchannelInterface,
    readonly hostname: string,
  ) {
    super(child);
  }

  unwrap(): SubchannelInterface {
    return this.child;
  }

  rewriting(authority: string): SubchannelInterface {
    if (this.rewriter?.authority !== authority) {
      this.rewriter = new AuthorityRewritingSubchannel(this.child, this.hostname, authority);
    }
    return this.rewriter;
  }
}

/**
 * Everything as the subchannel it wraps, but its real subchannel creates calls with `hostname`
 * as their :authority. A call whose `host` is not the channel's authority keeps it: the
 * application set that one on the call, and A81 lets a per-call authority win.
 */
class AuthorityRewritingSubchannel extends SubchannelWrapper {
  private real: RealSubchannel | undefined;
  private view: RealSubchannel | undefined;

  constructor(
    child: SubchannelInterface,
    private readonly hostname: string,
    readonly authority: string,
  ) {
    super(child);
  }

  override getRealSubchannel(): RealSubchannel {
    const real = this.child.getRealSubchannel();
    if (real !== this.real || !this.view) {
      this.real = real;
      // The real subchannel itself, but for createCall: grpc-js calls nothing else on it.
      const view = Object.create(real) as RealSubchannel;
      const { hostname, authority } = this;
      view.createCall = (metadata, host, method, listener, callId) =>
        real.createCall(metadata, host === authority ? hostname : host, method, listener, callId);
      this.view = view;
    }
    return this.view;
  }
}
