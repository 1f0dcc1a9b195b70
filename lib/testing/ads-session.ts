// One ADS stream on the server side: per type, what the client subscribed to and what was last
// sent, and the SotW rules that decide whether a request deserves a response. The rules follow
// go-control-plane's SotW server, the server most xDS clients are tested against.
import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { DiscoveryRequest, DiscoveryResponse } from '../generated/protos';
import { StreamSession } from './stream-session';

export type AdsCall = ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>;

export interface Subscription {
  /** Names from the latest accepted request ('*' removed). */
  names: ReadonlySet<string>;
  /** All resources of the type: a first request with no names, or '*'. */
  wildcard: boolean;
  /** '' until a response of this type went out on this stream. */
  lastNonce: string;
  lastVersion: string;
  /** A response is owed but responses of this type are held. */
  due: boolean;
}

/**
 * - `stale`: its nonce is not the last one sent for the type; ignore it entirely.
 * - `changed`: first request of the type, or new names; send the current resources.
 * - `unchanged`: an ACK or NACK with the same names; send nothing.
 */
export type RequestVerdict = 'stale' | 'changed' | 'unchanged';

const WILDCARD = '*';

export class AdsSession extends StreamSession<DiscoveryRequest, DiscoveryResponse> {
  readonly subscriptions = new Map<string, Subscription>();

  /** Applies a request of a served type to the subscription state. */
  applyRequest(request: DiscoveryRequest): RequestVerdict {
    const previous = this.subscriptions.get(request.typeUrl);
    if (request.responseNonce !== '' && request.responseNonce !== previous?.lastNonce) {
      return 'stale';
    }
    const names = new Set(request.resourceNames.filter((name) => name !== WILDCARD));
    // Legacy wildcard: an empty first request means "everything", and stays so while the
    // client keeps sending no names. Empty names after real ones mean "nothing".
    const wildcard =
      request.resourceNames.includes(WILDCARD) ||
      (request.resourceNames.length === 0 && (previous === undefined || previous.wildcard));
    if (previous === undefined) {
      this.subscriptions.set(request.typeUrl, {
        names,
        wildcard,
        lastNonce: '',
        lastVersion: '',
        due: false,
      });
      return 'changed';
    }
    const changed = previous.wildcard !== wildcard || !sameNames(previous.names, names);
    previous.names = names;
    previous.wildcard = wildcard;
    return changed ? 'changed' : 'unchanged';
  }

  /** True when something of the type was asked for, so a change of the type concerns it. */
  isSubscribed(typeUrl: string): boolean {
    const subscription = this.subscriptions.get(typeUrl);
    return subscription !== undefined && (subscription.wildcard || subscription.names.size > 0);
  }

  /** Writes a response and remembers its nonce, so the client's reply to it is not stale. */
  send(response: DiscoveryResponse): boolean {
    if (!this.isOpen) return false;
    let subscription = this.subscriptions.get(response.typeUrl);
    if (subscription === undefined) {
      // A crafted response of a type the client never asked for: its nonce still counts.
      subscription = {
        names: new Set(),
        wildcard: false,
        lastNonce: '',
        lastVersion: '',
        due: false,
      };
      this.subscriptions.set(response.typeUrl, subscription);
    }
    subscription.lastNonce = response.nonce;
    subscription.lastVersion = response.versionInfo;
    subscription.due = false;
    this.call.write(response);
    return true;
  }
}

function sameNames(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const name of a) if (!b.has(name)) return false;
  return true;
}
