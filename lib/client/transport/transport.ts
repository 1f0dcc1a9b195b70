import type { XdsServerConfig } from '../../bootstrap';

/** Receives what happens on one ADS call. */
export interface AdsCallHandlers {
  /** One serialized DiscoveryResponse (or DeltaDiscoveryResponse). */
  onMessage(bytes: Uint8Array): void;
  /** The call is over: OK, an error from the server, or a connection failure. Called once. */
  onEnd(code: number, details: string): void;
  /**
   * What the transport got for a type cannot be made into a response at all (a FILESYSTEM
   * file that does not parse). The client reports it as it reports a NACK — the `nack` event,
   * the dump's error state, an ambient error to watchers of cached resources (a resource error
   * to the others) — and keeps what it has. Optional so that handlers written for a transport
   * of your own (which never meets this) need not have it; the client always provides it.
   */
  onRejected?(typeUrl: string, message: string): void;
}

/** One ADS call (SotW or delta, as the server entry says), moving serialized frames. */
export interface AdsCall {
  /** Writes one serialized (Delta)DiscoveryRequest; `onWritten` runs once it is handed to the wire. */
  write(bytes: Uint8Array, onWritten: () => void): void;
  /** Cancels the call; no handler runs after this. */
  cancel(): void;
}

/**
 * The connection to one xDS server. The client core sees only bytes, so a spec or a user can
 * plug in another transport; the default one is grpc-js (grpc-transport.ts).
 */
export interface XdsTransport {
  startAdsCall(handlers: AdsCallHandlers): AdsCall;
  close(): void;
}

export type XdsTransportFactory = (server: XdsServerConfig) => XdsTransport;
