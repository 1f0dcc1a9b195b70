// gRFC A83's call credentials, applied after the pick: the ConfigSelector puts an RPC's
// TokenCredentials in its pick information, and the root picker hands grpc-js a subchannel
// whose call credentials add the ID token — only when that subchannel's connection is TLS. On
// any other connection the RPC fails with UNAUTHENTICATED before a token is fetched, as C-core
// and grpc-java fail a call credential on a channel without privacy (decision 0058).
//
// grpc-js composes `pickResult.subchannel.getCallCredentials()` into the call's credentials
// once the pick is made, and generates their metadata before starting the stream: that is the
// hook. Per RPC this makes no object of ours beyond the pick result: the wrapper subchannels
// are kept per (subchannel, credentials) while both live, and an audience's credentials live
// in its filter's cache across configuration updates.
import { CallCredentials, Metadata, experimental, status } from '@grpc/grpc-js';
import {
  connectionSecurity,
  failingCallCredentials,
  type ConnectionSecurity,
} from '../certificates/connection-security';
import type { IdentityTokenSource } from './identity-token';

type SubchannelInterface = experimental.SubchannelInterface;
type PickInfo = { readonly [key: string]: string };

/**
 * The pick information key of an RPC's TokenCredentials. grpc-js passes pick information to
 * the picker untouched, so the value is the object itself (typed as a string by grpc-js).
 */
const PICK_TOKEN_CREDENTIALS = 'xds_client.gcp_authn_credentials';

const NO_CREDENTIALS = CallCredentials.createEmpty();

/** The ID token of one audience, as the RPCs routed to a cluster naming it carry it. */
export class TokenCredentials {
  private readonly credentials: CallCredentials;
  private readonly subchannels = new WeakMap<SubchannelInterface, SubchannelInterface>();
  /** Why RPCs fail on a connection without TLS, or one grpc-js does not say is TLS. */
  private readonly insecure: CallCredentials;
  private readonly unknown: CallCredentials;

  constructor(source: IdentityTokenSource) {
    this.credentials = bearerCredentials(source);
    const { audience } = source;
    this.insecure = failingCallCredentials(
      status.UNAUTHENTICATED,
      `cannot send the ID token for ${audience} on an insecure connection (gcp_authn, A83)`,
    );
    this.unknown = failingCallCredentials(
      status.UNAUTHENTICATED,
      `cannot tell whether the connection is TLS, so the ID token for ${audience} is not sent (gcp_authn, A83)`,
    );
  }

  /**
   * The credentials of an RPC on a connection with `security`: the tokens on TLS; none on a
   * connection gone since the pick (grpc-js picks again, no stream is started); on any other,
   * a failure, and no token fetched.
   */
  forConnection(security: ConnectionSecurity): CallCredentials {
    switch (security) {
      case 'tls':
        return this.credentials;
      case 'unconnected':
        return NO_CREDENTIALS;
      case 'insecure':
        return this.insecure;
      case 'unknown':
        return this.unknown;
    }
  }

  /** `subchannel` as grpc-js must get it for an RPC carrying these tokens. */
  on(subchannel: SubchannelInterface): SubchannelInterface {
    let wrapped = this.subchannels.get(subchannel);
    if (!wrapped) {
      wrapped = tokenSubchannel(subchannel, this);
      this.subchannels.set(subchannel, wrapped);
    }
    return wrapped;
  }

  /** `info` with these credentials added (a new object: grpc-js may share `info`). */
  addTo(info: PickInfo): PickInfo {
    return { ...info, [PICK_TOKEN_CREDENTIALS]: this as unknown as string };
  }

  /** The credentials `info` carries, if any. */
  static in(info: PickInfo): TokenCredentials | undefined {
    const value: unknown = info[PICK_TOKEN_CREDENTIALS];
    return value instanceof TokenCredentials ? value : undefined;
  }
}

/**
 * A completed pick as grpc-js must get it: when the RPC carries ID tokens (A83), its subchannel
 * is wrapped so that the tokens are added on a TLS connection, and the RPC fails on any other.
 */
export function addTokenCredentials(
  result: experimental.PickResult,
  info: PickInfo,
): experimental.PickResult {
  const tokens = TokenCredentials.in(info);
  if (!tokens || !result.subchannel) return result;
  return { ...result, subchannel: tokens.on(result.subchannel) };
}

/**
 * `child` for grpc-js, but for the call credentials of its RPCs. A view (an object whose
 * prototype is `child`) rather than a BaseSubchannelWrapper, which would add a health watcher
 * to `child` for good: grpc-js only reads a picked subchannel (its state, real subchannel,
 * address, channelz ref and call credentials), and the view answers those as `child` does.
 */
function tokenSubchannel(
  child: SubchannelInterface,
  tokens: TokenCredentials,
): SubchannelInterface {
  const guarded = CallCredentials.createFromMetadataGenerator((options, callback) => {
    // grpc-js marks a subchannel READY before it stores the connection, and picks queued RPCs
    // in between: the connection is looked at once that is done.
    queueMicrotask(() => {
      const credentials = tokens.forConnection(connectionSecurity(child));
      credentials.generateMetadata(options).then(
        (metadata) => callback(null, metadata),
        (error: Error) => callback(error),
      );
    });
  });
  /** The connection's own call credentials, then the tokens (made on first use). */
  let composed: CallCredentials | undefined;
  const view = Object.create(child) as SubchannelInterface;
  view.getCallCredentials = () => (composed ??= child.getCallCredentials().compose(guarded));
  return view;
}

/** Adds `authorization: Bearer <token>`; an RPC without a token fails with the fetch's status. */
function bearerCredentials(source: IdentityTokenSource): CallCredentials {
  return CallCredentials.createFromMetadataGenerator((_options, callback) => {
    source.token().then(
      (token) => {
        const metadata = new Metadata();
        metadata.set('authorization', `Bearer ${token}`);
        callback(null, metadata);
      },
      (failure: { code: status; details: string }) =>
        callback(Object.assign(new Error(failure.details), { code: failure.code })),
    );
  });
}
