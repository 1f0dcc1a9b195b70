import type { XdsError } from '../../errors';

export interface RequestEvent {
  /** The xDS server's URI. */
  readonly server: string;
  readonly typeUrl: string;
  readonly resourceNames: readonly string[];
  readonly versionInfo: string;
  readonly responseNonce: string;
  /** Set on a NACK. */
  readonly errorDetail: string | undefined;
  /**
   * Delta (incremental) streams only: `resourceNames` are then the names this request
   * subscribes to, and these the rest of the DeltaDiscoveryRequest.
   */
  readonly delta?: {
    readonly unsubscribe: readonly string[];
    readonly initialResourceVersions: Readonly<Record<string, string>>;
  };
}

export interface ResponseEvent {
  readonly server: string;
  readonly typeUrl: string;
  readonly versionInfo: string;
  readonly nonce: string;
  readonly resourceCount: number;
  /** Delta streams only: the names the server removed. */
  readonly removedResources?: readonly string[];
}

export interface AckEvent {
  readonly server: string;
  readonly typeUrl: string;
  readonly versionInfo: string;
  readonly nonce: string;
  /**
   * Resources of the response the client subscribed to and found valid, unchanged ones
   * included (gRFC A78). Resources nobody subscribed to are ignored undecoded: in neither count.
   */
  readonly validResources: number;
  /** Resources that failed validation (0 on an ACK). */
  readonly invalidResources: number;
}

export interface NackEvent extends AckEvent {
  /** The error_detail message: every invalid resource, named, with its field paths. */
  readonly error: string;
}

export interface ConnectedEvent {
  readonly server: string;
}

export interface DisconnectedEvent {
  readonly server: string;
  /** Set when the stream failed before any response (a connectivity problem, gRFC A57). */
  readonly error: XdsError | undefined;
  readonly hadResponse: boolean;
}

/**
 * gRFC A71: an authority changed the xDS server it uses. `fallback`: its current server failed
 * while a watched resource was uncached, and it moved down its `xds_servers`; `recovered`: a
 * server above the current one answered again, and the authority went back to it (the servers
 * below are dropped).
 */
export interface FallbackEvent {
  /** The authority (gRFC A47); undefined for old-style resource names. */
  readonly authority: string | undefined;
  /** The server now in use. */
  readonly server: string;
  /** The server in use before. */
  readonly previous: string;
  readonly reason: 'fallback' | 'recovered';
}

/**
 * `client.on(name, listener)`. Payloads are built only while someone listens. Events are
 * observations: a listener that throws is not isolated from the client, so keep them simple.
 */
export interface XdsClientEvents {
  /** A DiscoveryRequest was written to a stream. */
  request: (event: RequestEvent) => void;
  /** A DiscoveryResponse arrived. */
  response: (event: ResponseEvent) => void;
  ack: (event: AckEvent) => void;
  nack: (event: NackEvent) => void;
  /** The first response of a stream arrived. */
  connected: (event: ConnectedEvent) => void;
  /** A stream ended; the client reconnects with backoff. */
  disconnected: (event: DisconnectedEvent) => void;
  /** An authority moved to another of its xDS servers (gRFC A71). */
  fallback: (event: FallbackEvent) => void;
}
