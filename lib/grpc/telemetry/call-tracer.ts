// A66's CallTracer architecture, in the plugin's words: grpc-js calls none of this by itself,
// so the plugin's own hooks do (the ConfigSelector's per-call filter and the root picker on
// `xds:` channels, the exported interceptors on plain ones, the XdsServer's interceptor). Each
// hook talks to one tracer of each kind; metrics (A66) and spans (A72) are two implementations,
// fanned out by `clientCallOf` / `serverCallOf`. A tracer must never throw: its methods run inside grpc-js's call path.
import type { Metadata, status } from '@grpc/grpc-js';

/**
 * Where an attempt is routed, as its picks find out (A89, A78): a live view, which the picks
 * fill in (the last pick's values win, A89) and a tracer reads when the attempt ends.
 */
export interface PickedBackend {
  /** The cluster the attempt was routed to (A89's `grpc.lb.backend_service`); '' unknown. */
  readonly backendService: string;
  /**
   * Its endpoint's locality (A78's `grpc.lb.locality`), as
   * `{region="…", zone="…", sub_zone="…"}`; '' unknown.
   */
  readonly locality: string;
  /** Whether the attempt's pick had to wait (A72's "Delayed LB pick complete" event). */
  readonly delayed: boolean;
}

/** What an attempt is started with (A66: after resolution and filters, before the pick). */
export interface AttemptOptions {
  /** A72's `transparent-retry`. */
  readonly transparentRetry: boolean;
  /** A72's `previous-rpc-attempts`: attempts before this one, transparent retries not counted. */
  readonly previousAttempts: number;
  readonly backend: PickedBackend;
}

/**
 * One attempt of a client call (a retry or hedge is another). Messages are given as they
 * cross the wire, per attempt: their bytes without gRPC's 5-byte frame header, and whether they
 * were compressed (an attempt's hooks see no uncompressed size of a compressed message).
 */
export interface AttemptTracer {
  /** The attempt's metadata, just before its stream is created: A72 injects its span here. */
  sendingMetadata(metadata: Metadata): void;
  /** The pick completed: a stream is being created (`backend.delayed` says if it waited). */
  picked(): void;
  sentMessage(bytes: number, compressed: boolean): void;
  receivedMessage(bytes: number, compressed: boolean): void;
  /** The attempt's status; called once, after which nothing else is. */
  end(code: status, details: string): void;
}

/** One client call, from the application's start to the status it receives. */
export interface ClientCallTracer {
  /** A66: after resolution and filters, before the pick. */
  startAttempt(options: AttemptOptions): AttemptTracer;
  /** A72: the call waited for name resolution, now complete. */
  resolutionDelayed(): void;
  /** The status delivered to the application; called once. */
  end(code: status, details: string): void;
}

/**
 * One call an XdsServer (or a server with our interceptor) receives. Its messages are given as
 * numbers (no object per message): `size`, the bytes before compression, less the frame
 * header (A72's `message-size`); `compressedSize`, the bytes on the wire when the message was
 * compressed (A72's `message-size-compressed`), else undefined.
 */
export interface ServerCallTracer {
  sentMessage(size: number, compressedSize: number | undefined): void;
  receivedMessage(size: number, compressedSize: number | undefined): void;
  /** The status sent (or the stream's end without one); called once. */
  end(code: status, details: string): void;
}

/** The client tracers of one call (metrics and spans) as one, or the one itself when alone. */
export function clientCallOf(tracers: readonly ClientCallTracer[]): ClientCallTracer | undefined {
  return tracers.length <= 1 ? tracers[0] : new ClientCallFanOut(tracers);
}

/** The server tracers of one call as one, or the one itself when alone. */
export function serverCallOf(tracers: readonly ServerCallTracer[]): ServerCallTracer | undefined {
  return tracers.length <= 1 ? tracers[0] : new ServerCallFanOut(tracers);
}

class ClientCallFanOut implements ClientCallTracer {
  constructor(private readonly tracers: readonly ClientCallTracer[]) {}
  startAttempt(options: AttemptOptions): AttemptTracer {
    return new AttemptFanOut(this.tracers.map((t) => t.startAttempt(options)));
  }
  resolutionDelayed(): void {
    for (const t of this.tracers) t.resolutionDelayed();
  }
  end(code: status, details: string): void {
    for (const t of this.tracers) t.end(code, details);
  }
}

class AttemptFanOut implements AttemptTracer {
  constructor(private readonly tracers: readonly AttemptTracer[]) {}
  sendingMetadata(metadata: Metadata): void {
    for (const t of this.tracers) t.sendingMetadata(metadata);
  }
  picked(): void {
    for (const t of this.tracers) t.picked();
  }
  sentMessage(bytes: number, compressed: boolean): void {
    for (const t of this.tracers) t.sentMessage(bytes, compressed);
  }
  receivedMessage(bytes: number, compressed: boolean): void {
    for (const t of this.tracers) t.receivedMessage(bytes, compressed);
  }
  end(code: status, details: string): void {
    for (const t of this.tracers) t.end(code, details);
  }
}

class ServerCallFanOut implements ServerCallTracer {
  constructor(private readonly tracers: readonly ServerCallTracer[]) {}
  sentMessage(size: number, compressedSize: number | undefined): void {
    for (const t of this.tracers) t.sentMessage(size, compressedSize);
  }
  receivedMessage(size: number, compressedSize: number | undefined): void {
    for (const t of this.tracers) t.receivedMessage(size, compressedSize);
  }
  end(code: status, details: string): void {
    for (const t of this.tracers) t.end(code, details);
  }
}
