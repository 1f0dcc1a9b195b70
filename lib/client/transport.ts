import type { XdsServerConfig } from '../bootstrap';

/** Receives what happens on one ADS call. */
export interface AdsCallHandlers {
  /** One serialized DiscoveryResponse (or DeltaDiscoveryResponse). */
  onMessage(bytes: Uint8Array): void;
  /** The call is over: OK, an error from the server, or a connection failure. Called once. */
  onEnd(code: number, details: string): void;
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
