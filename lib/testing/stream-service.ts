// What the SotW and delta ADS services of the ManagementServer do alike: open and track their
// streams, record each request, fail a stream with the fault set when it opened, and send what
// is owed once held responses are released.
import { status, type ServerDuplexStream } from '@grpc/grpc-js';
import type { StreamHost, StreamSession } from './stream-session';

type Fault = { readonly code: status; readonly details: string } | undefined;

/** A session with per-type subscriptions, each of which may be owed a held response. */
type Session<Req, Res> = StreamSession<Req, Res> & {
  readonly subscriptions: ReadonlyMap<string, { due: boolean }>;
};

export abstract class StreamService<
  Req extends { readonly typeUrl: string },
  Res,
  S extends Session<Req, Res>,
  Recorded,
> {
  /** Every request received, in order. */
  readonly requests: Recorded[] = [];
  protected readonly sessions = new Map<number, S>();

  constructor(protected readonly host: StreamHost) {}

  protected abstract newSession(id: number, call: ServerDuplexStream<Req, Res>, fault: Fault): S;
  protected abstract record(streamId: number, request: Req): Recorded;
  /** A request of an open stream, recorded already. */
  protected abstract apply(session: S, request: Req): void;
  /** Sends the stream what it is owed for the type now. */
  protected abstract respond(session: S, typeUrl: string): void;

  get streamCount(): number {
    let open = 0;
    for (const session of this.sessions.values()) if (session.isOpen) open++;
    return open;
  }

  /** `onlyType`: a per-type service's stream, which carries that type only. */
  onStream(call: ServerDuplexStream<Req, Res>, onlyType?: string): void {
    const { id, fault } = this.host.streamOpened(call as ServerDuplexStream<unknown, unknown>);
    const session = this.newSession(id, call, fault);
    session.onlyType = onlyType;
    if (this.host.isClosing()) {
      session.end(status.UNAVAILABLE, 'management server closed');
      return;
    }
    this.sessions.set(id, session);
    const detach = () => {
      session.markClosed();
      this.sessions.delete(id);
    };
    call.on('data', (request: Req) => this.onRequest(session, request));
    // A client that half-closes is done: end with OK, as go-control-plane does.
    call.on('end', () => session.end(status.OK, ''));
    call.on('finish', detach);
    call.on('cancelled', detach);
    call.on('close', detach);
    this.host.notify();
  }

  /** Responses are no longer held: send each stream what it is owed. */
  release(): void {
    for (const session of this.sessions.values()) {
      for (const [typeUrl, subscription] of session.subscriptions) {
        if (subscription.due) this.respond(session, typeUrl);
      }
    }
  }

  endStreams(code: status, details: string): void {
    for (const session of this.sessions.values()) session.end(code, details);
  }

  /** Ends the open stream `id`; false if no such stream is open here. */
  endStream(id: number, code: status, details: string): boolean {
    const session = this.sessions.get(id);
    if (!session?.isOpen) return false;
    session.end(code, details);
    return true;
  }

  private onRequest(session: S, request: Req): void {
    this.requests.push(this.record(session.id, request));
    const first = session.requestCount++ === 0;
    if (session.onlyType !== undefined && request.typeUrl !== session.onlyType) {
      // A per-type stream is for its type only, as go-control-plane's server insists.
      session.end(
        status.INVALID_ARGUMENT,
        `type URL ${request.typeUrl} on the stream of ${session.onlyType}`,
      );
    } else if (first && session.fault) {
      session.end(session.fault.code, session.fault.details);
    } else if (session.isOpen && !this.host.isClosing()) {
      this.apply(session, request);
    }
    this.host.notify();
  }
}
