// What every ADS stream of the server has, SotW or delta: an id, a fault to fail with, and an
// open/ended state.
import { status, type ServerDuplexStream } from '@grpc/grpc-js';
import type { RecordedResponse } from './recorder';
import type { ResourceStore } from './resource-store';

export class StreamSession<Req, Res> {
  requestCount = 0;
  /** Set on a per-type service's stream: the one type it may carry. */
  onlyType: string | undefined;
  private open = true;

  constructor(
    readonly id: number,
    protected readonly call: ServerDuplexStream<Req, Res>,
    /** End the stream with this status on its first request (setStreamFault). */
    readonly fault: { readonly code: status; readonly details: string } | undefined,
  ) {}

  get isOpen(): boolean {
    return this.open && !this.call.cancelled;
  }

  /** Ends the stream with a status, after the responses already written. */
  end(code: status, details: string): void {
    if (!this.isOpen) return;
    this.open = false;
    if (code === status.OK) {
      this.call.end();
      return;
    }
    // grpc-js turns an 'error' event on a server stream into the call's status.
    this.call.emit('error', Object.assign(new Error(details), { code, details }));
  }

  /** The call finished or was cancelled by the client. */
  markClosed(): void {
    this.open = false;
  }
}

/** What the SotW and delta services need of their ManagementServer. */
export interface StreamHost {
  readonly store: ResourceStore;
  isHeld(typeUrl: string): boolean;
  nextNonce(): string;
  /**
   * A new stream's id, and the fault it must fail with (setStreamFault); the stream's method
   * and metadata are recorded.
   */
  streamOpened(call: ServerDuplexStream<unknown, unknown>): {
    id: number;
    fault: { code: status; details: string } | undefined;
  };
  isClosing(): boolean;
  log(line: string): void;
  recordResponse(response: RecordedResponse): void;
  /** Something was recorded: re-check the waiters. */
  notify(): void;
}
