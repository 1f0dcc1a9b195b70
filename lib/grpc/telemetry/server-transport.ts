// What only grpc-js's innermost server call knows of an RPC: the bytes of each message as they
// cross the wire (its interceptors see deserialized messages) and every status sent, its own
// included (deadline, undecodable message). grpc-js has no hook for either, so the telemetry
// interceptor wraps three methods of that one call object (decision 0066); when a grpc-js
// version no longer has them, it falls back to what an interceptor sees (server-interceptor.ts).
import { status, type ServerInterceptingCallInterface, type StatusObject } from '@grpc/grpc-js';

/** What the observer of one call's transport is told (sizes as ServerCallTracer takes them). */
export interface TransportObserver {
  sent(size: number, compressedSize: number | undefined): void;
  received(size: number, compressedSize: number | undefined): void;
  /** A status is being sent (the first one counts). */
  status(code: number, details: string): void;
}

/** grpc-js 1.14's BaseServerInterceptingCall, as far as it is wrapped here. */
interface BaseCall {
  serializeMessage(value: unknown): Buffer;
  decompressMessage(message: Buffer, encoding: string): Buffer | Promise<Buffer>;
  sendStatus(status: Partial<StatusObject>): void;
  checkCancelled(): boolean;
}

/** The gRPC message frame's header: a compressed flag and a 4-byte length. */
const FRAME_HEADER = 5;
/** Interceptors between ours and the transport that a search looks through. */
const MAX_DEPTH = 64;

/**
 * Tells `observer` of the call's wire traffic and statuses; false when grpc-js's innermost call
 * was not found under `call` (then nothing is wrapped).
 */
export function observeTransport(
  call: ServerInterceptingCallInterface,
  observer: TransportObserver,
): boolean {
  const base = innermostCall(call);
  if (!base) return false;
  const serialize = base.serializeMessage;
  base.serializeMessage = function (value) {
    const framed = serialize.call(this, value);
    // grpc-js 1.14 never compresses a response (the flag byte is always 0).
    const size = framed.length - FRAME_HEADER;
    observer.sent(size, framed[0] === 1 ? size : undefined);
    return framed;
  };
  const decompress = base.decompressMessage;
  base.decompressMessage = function (message, encoding) {
    const wire = message.length - FRAME_HEADER;
    const result = decompress.call(this, message, encoding);
    if (Buffer.isBuffer(result)) observer.received(wire, undefined);
    else {
      result.then(
        (plain) => observer.received(plain.length, wire),
        () => {}, // grpc-js sends the status for a message it cannot decompress
      );
    }
    return result;
  };
  const sendStatus = base.sendStatus;
  base.sendStatus = function (sent) {
    // A call the client already cancelled sends nothing; onCancel records it.
    if (!this.checkCancelled()) observer.status(sent.code ?? status.UNKNOWN, sent.details ?? '');
    sendStatus.call(this, sent);
  };
  return true;
}

/** grpc-js's BaseServerInterceptingCall under `call` (interceptors keep it as `nextCall`). */
function innermostCall(call: ServerInterceptingCallInterface): BaseCall | undefined {
  let current: unknown = call;
  for (let depth = 0; depth < MAX_DEPTH && typeof current === 'object' && current; depth++) {
    if (isBaseCall(current)) return current;
    current = (current as { nextCall?: unknown }).nextCall;
  }
  return undefined;
}

function isBaseCall(value: object): value is BaseCall {
  const call = value as Partial<Record<keyof BaseCall, unknown>>;
  return (
    typeof call.serializeMessage === 'function' &&
    typeof call.decompressMessage === 'function' &&
    typeof call.sendStatus === 'function' &&
    typeof call.checkCancelled === 'function'
  );
}
