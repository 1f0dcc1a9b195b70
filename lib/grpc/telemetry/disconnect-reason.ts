// A94's `grpc.disconnect_error`: why a subchannel's connection closed, the first reason seen.
// grpc-js tells a subchannel only that its transport is gone, so the reason is read from the
// connection's HTTP/2 session itself (a GOAWAY frame's code, a socket error's code).
import type { ClientHttp2Session } from 'node:http2';

export const SUBCHANNEL_SHUTDOWN = 'subchannel shutdown';
export const UNKNOWN_REASON = 'unknown';

/** RFC 9113's error codes (section 7), by value. */
const HTTP2_ERRORS: readonly string[] = [
  'NO_ERROR',
  'PROTOCOL_ERROR',
  'INTERNAL_ERROR',
  'FLOW_CONTROL_ERROR',
  'SETTINGS_TIMEOUT',
  'STREAM_CLOSED',
  'FRAME_SIZE_ERROR',
  'REFUSED_STREAM',
  'CANCEL',
  'COMPRESSION_ERROR',
  'CONNECT_ERROR',
  'ENHANCE_YOUR_CALM',
  'INADEQUATE_SECURITY',
  'HTTP_1_1_REQUIRED',
];

/** A94's reason for a socket error's code. */
export function socketErrorReason(code: string | undefined): string {
  switch (code) {
    case 'ECONNRESET':
    case 'WSAECONNRESET':
      return 'connection reset';
    case 'ETIMEDOUT':
    case 'WSAETIMEDOUT':
      return 'connection timed out';
    case 'ECONNABORTED':
    case 'WSAECONNABORTED':
      return 'connection aborted';
    default:
      return 'socket error';
  }
}

/** A94's reason for a GOAWAY frame with `code`: `GOAWAY NO_ERROR`, `GOAWAY ENHANCE_YOUR_CALM`… */
export function goawayReason(code: number): string {
  return `GOAWAY ${HTTP2_ERRORS[code] ?? `0x${code.toString(16)}`}`;
}

/** Calls `seen` once, with the first reason `session` gives for closing. */
export function watchCloseReason(
  session: ClientHttp2Session,
  seen: (reason: string) => void,
): void {
  let told = false;
  const tell = (reason: string) => {
    if (told) return;
    told = true;
    seen(reason);
  };
  // First in line: grpc-js's own listeners report the disconnection at once.
  session.prependOnceListener('goaway', (code: number) => tell(goawayReason(code)));
  session.prependOnceListener('error', (e: NodeJS.ErrnoException) =>
    tell(socketErrorReason(e.code)),
  );
  session.socket?.prependOnceListener('error', (e: NodeJS.ErrnoException) =>
    tell(socketErrorReason(e.code)),
  );
}
