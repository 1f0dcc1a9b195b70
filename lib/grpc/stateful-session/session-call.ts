// What an RPC with a session (gRFC A55) carries to the LB tree and back. The cookie's addresses
// go down as pick information (PICK_OVERRIDE_HOST); the endpoint the RPC was sent to comes back
// to the RPC's filter through an object on the same pick information, under a symbol: grpc-js
// hands that object by reference to every picker of the call (its type only speaks of strings,
// which a symbol key does not touch).

/** The pick information key of an RPC's SessionCall. */
export const SESSION_CALL: unique symbol = Symbol('xds_client.session_call');

/** Told which endpoint each pick of the RPC chose. */
export interface SessionCall {
  /** The picked endpoint's addresses, `host:port` joined by commas. */
  picked(addresses: string): void;
}

/** The pick information of an RPC, as our pickers read it. */
export type SessionPickInfo = { readonly [key: string]: string } & {
  readonly [SESSION_CALL]?: SessionCall;
};

/** The RPC's SessionCall, if it has a session. */
export function sessionCallOf(info: { readonly [key: string]: string }): SessionCall | undefined {
  return (info as SessionPickInfo)[SESSION_CALL];
}
