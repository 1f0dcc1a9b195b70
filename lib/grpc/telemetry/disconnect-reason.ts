// A94's `grpc.disconnect_error`: why a subchannel's connection closed, the first reason seen.
// grpc-js tells a subchannel only that its transport is gone, so the reason is read from the
// connection's HTTP/2 session itself (a GOAWAY frame's code, a socket error's code, a keepalive
// ping left unanswered).
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

/** A94's reason for a keepalive ping that went unanswered (gRFC A8's timeout). */
export const KEEPALIVE_TIMEOUT = 'connection timed out';

/**
 * Why one connection closed: the first reason its HTTP/2 session gave (a GOAWAY, an error), or,
 * when it gave none, whether grpc-js dropped it for an unanswered keepalive ping.
 */
export class CloseReason {
  private first: string | undefined;
  /** Pings sent on the session and not yet answered (or cancelled). */
  private unansweredPings = 0;

  constructor(private readonly session: ClientHttp2Session) {
    const tell = (reason: string) => {
      this.first ??= reason;
    };
    // First in line: grpc-js's own listeners report the disconnection at once.
    session.prependOnceListener('goaway', (code: number) => tell(goawayReason(code)));
    session.prependOnceListener('error', (e: NodeJS.ErrnoException) =>
      tell(socketErrorReason(e.code)),
    );
    session.socket?.prependOnceListener('error', (e: NodeJS.ErrnoException) =>
      tell(socketErrorReason(e.code)),
    );
    this.countPings();
  }

  /**
   * The reason, read when grpc-js reports the connection closed: an event's, else
   * KEEPALIVE_TIMEOUT when a ping is unanswered and the session not yet destroyed (grpc-js
   * destroys it a turn after reporting its own timeout; a socket that closed by itself has
   * destroyed the session before grpc-js hears of it).
   */
  read(): string | undefined {
    if (this.first !== undefined) return this.first;
    const alive = !this.session.destroyed;
    return alive && this.unansweredPings > 0 ? KEEPALIVE_TIMEOUT : undefined;
  }

  /**
   * grpc-js's keepalive timeout is its own timer, which no event shows: the session's `ping`
   * (a public method of a session grpc-js made) is wrapped to count the pings in flight. A
   * session without it (a grpc-js that no longer pings this way) gives no keepalive reason
   * (decision 0079).
   */
  private countPings(): void {
    const { session } = this;
    const ping = session.ping as (...args: unknown[]) => boolean;
    if (typeof ping !== 'function') return;
    const wrapped = (...args: unknown[]): boolean => {
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback !== 'function') return ping.apply(session, args);
      let inFlight = false;
      args[last] = (...result: unknown[]) => {
        if (inFlight) this.unansweredPings--;
        inFlight = false;
        return (callback as (...r: unknown[]) => unknown)(...result);
      };
      const sent = ping.apply(session, args);
      if (sent) {
        inFlight = true;
        this.unansweredPings++;
      }
      return sent;
    };
    session.ping = wrapped as ClientHttp2Session['ping'];
  }
}
