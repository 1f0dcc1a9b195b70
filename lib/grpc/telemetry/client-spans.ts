// A72's client spans: `Sent.<service>.<method>` for the call, a child of the context active when
// the call started, and `Attempt.<service>.<method>` for each attempt, a child of the call's,
// with its retry attributes, its pick delay and message events, and its context injected in
// the attempt's metadata through the channel's propagator. Loaded only when a tracer is set.
import type { Metadata, status as Status } from '@grpc/grpc-js';
import type { Context, Span, TextMapPropagator, Tracer } from '@opentelemetry/api';
import type { AttemptOptions, AttemptTracer, ClientCallTracer } from './call-tracer';
import { metadataSetter } from './grpc-trace-bin';
import { endSpan, messageEventAttributes, spanSuffix } from './span-names';
import { otelApi } from '../../client/metrics/otel-api';

// Required only once a channel has a tracer (channel-telemetry.ts): the API loads with it.
const api = otelApi();

/** How many methods keep their span names (past it, a call makes its own). */
const KEPT_NAMES = 500;

/** A72's span names of one method's calls and attempts. */
interface SpanNames {
  readonly call: string;
  readonly attempt: string;
}

/** The spans of one channel's calls. */
export class ClientSpans {
  private readonly names = new Map<string, SpanNames>();

  constructor(
    private readonly tracer: Tracer,
    private readonly propagator: TextMapPropagator,
  ) {}

  /** The tracer of one call to `path` (`/pkg.Service/Method`) started at `start`. */
  startCall(path: string, start: number): ClientCallTracer {
    let names = this.names.get(path);
    if (names === undefined) {
      const suffix = spanSuffix(path);
      names = { call: `Sent.${suffix}`, attempt: `Attempt.${suffix}` };
      if (this.names.size < KEPT_NAMES) this.names.set(path, names);
    }
    return new CallSpan(this.tracer, this.propagator, names, start);
  }
}

/** A first attempt's span options, the same for every call (the SDK copies what it keeps). */
const FIRST_ATTEMPT = {
  attributes: { 'previous-rpc-attempts': 0, 'transparent-retry': false },
} as const;

class CallSpan implements ClientCallTracer {
  private readonly span: Span;
  /**
   * The context active when the call started: the call span's parent. The contexts that hold a
   * span are made when used, not kept: each copies the context's entries, and a call lives
   * long enough for what it keeps to outlast a young-generation collection.
   */
  private readonly parent: Context;

  constructor(
    private readonly tracer: Tracer,
    private readonly propagator: TextMapPropagator,
    private readonly names: SpanNames,
    /** performance.now() at the call's start (OpenTelemetry reads such a number as one). */
    start: number,
  ) {
    this.parent = api.context.active();
    this.span = tracer.startSpan(names.call, { startTime: start }, this.parent);
  }

  startAttempt(options: AttemptOptions): AttemptTracer {
    const span = this.tracer.startSpan(
      this.names.attempt,
      options.previousAttempts === 0 && !options.transparentRetry
        ? FIRST_ATTEMPT
        : {
            attributes: {
              'previous-rpc-attempts': options.previousAttempts,
              'transparent-retry': options.transparentRetry,
            },
          },
      api.trace.setSpan(this.parent, this.span),
    );
    return new AttemptSpan(span, this.parent, this.propagator, options);
  }

  resolutionDelayed(): void {
    this.span.addEvent('Delayed name resolution complete');
  }

  end(code: Status, details: string): void {
    endSpan(this.span, code, details);
  }
}

class AttemptSpan implements AttemptTracer {
  private sent = 0;
  private received = 0;

  constructor(
    private readonly span: Span,
    /** The call's parent context: what the attempt's context adds its span to. */
    private readonly parent: Context,
    private readonly propagator: TextMapPropagator,
    private readonly options: AttemptOptions,
  ) {}

  sendingMetadata(metadata: Metadata): void {
    // The attempt span replaces the call's in what is sent; the rest (baggage) is the call's.
    const context = api.trace.setSpan(this.parent, this.span);
    this.propagator.inject(context, metadata, metadataSetter);
  }

  picked(): void {
    if (this.options.backend.delayed) this.span.addEvent('Delayed LB pick complete');
  }

  sentMessage(bytes: number, compressed: boolean): void {
    this.span.addEvent('Outbound message', attemptMessage(this.sent++, bytes, compressed));
  }

  receivedMessage(bytes: number, compressed: boolean): void {
    this.span.addEvent('Inbound message', attemptMessage(this.received++, bytes, compressed));
  }

  end(code: Status, details: string): void {
    endSpan(this.span, code, details);
  }
}

/**
 * A72's attributes of an attempt's message event. A compressed message's uncompressed size is
 * not known where attempts are seen (docs/protocol-notes.md): it carries its compressed size only.
 */
function attemptMessage(sequence: number, bytes: number, compressed: boolean) {
  return compressed
    ? messageEventAttributes(sequence, undefined, bytes)
    : messageEventAttributes(sequence, bytes, undefined);
}
