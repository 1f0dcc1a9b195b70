// A72's client spans: `Sent.<service>.<method>` for the call, a child of the context active when
// the call started, and `Attempt.<service>.<method>` for each attempt, a child of the call's,
// with its retry attributes, its pick delay and message events, and its context injected in
// the attempt's metadata through the channel's propagator. Loaded only when a tracer is set.
import type { Metadata, status as Status } from '@grpc/grpc-js';
import type { Context, Span, TextMapPropagator, Tracer } from '@opentelemetry/api';
import type { AttemptOptions, AttemptTracer, ClientCallTracer } from './call-tracer';
import { metadataSetter } from './grpc-trace-bin';
import { endSpan, spanSuffix } from './span-names';
import { otelApi } from '../../client/metrics/otel-api';

// Required only once a channel has a tracer (channel-telemetry.ts): the API loads with it.
const api = otelApi();

/** The spans of one channel's calls. */
export class ClientSpans {
  constructor(
    private readonly tracer: Tracer,
    private readonly propagator: TextMapPropagator,
  ) {}

  /** The tracer of one call to `path` (`/pkg.Service/Method`) started at `start`. */
  startCall(path: string, start: number): ClientCallTracer {
    return new CallSpan(this.tracer, this.propagator, spanSuffix(path), start);
  }
}

class CallSpan implements ClientCallTracer {
  private readonly span: Span;
  /** The call span's context: each attempt span's parent. */
  private readonly context: Context;

  constructor(
    private readonly tracer: Tracer,
    private readonly propagator: TextMapPropagator,
    readonly suffix: string,
    /** performance.now() at the call's start (OpenTelemetry reads such a number as one). */
    start: number,
  ) {
    const parent = api.context.active();
    this.span = tracer.startSpan(`Sent.${suffix}`, { startTime: start }, parent);
    this.context = api.trace.setSpan(parent, this.span);
  }

  startAttempt(options: AttemptOptions): AttemptTracer {
    const span = this.tracer.startSpan(
      `Attempt.${this.suffix}`,
      {
        attributes: {
          'previous-rpc-attempts': options.previousAttempts,
          'transparent-retry': options.transparentRetry,
        },
      },
      this.context,
    );
    return new AttemptSpan(span, this.context, this.propagator, options);
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
    private readonly callContext: Context,
    private readonly propagator: TextMapPropagator,
    private readonly options: AttemptOptions,
  ) {}

  sendingMetadata(metadata: Metadata): void {
    const context = api.trace.setSpan(this.callContext, this.span);
    this.propagator.inject(context, metadata, metadataSetter);
  }

  picked(): void {
    if (this.options.backend.delayed) this.span.addEvent('Delayed LB pick complete');
  }

  sentMessage(bytes: number, compressed: boolean): void {
    this.span.addEvent('Outbound message', messageAttributes(this.sent++, bytes, compressed));
  }

  receivedMessage(bytes: number, compressed: boolean): void {
    this.span.addEvent('Inbound message', messageAttributes(this.received++, bytes, compressed));
  }

  end(code: Status, details: string): void {
    endSpan(this.span, code, details);
  }
}

/**
 * A72's message event attributes. A compressed message's uncompressed size is not known where
 * attempts are seen (docs/protocol-notes.md): it carries `message-size-compressed` only.
 */
export function messageAttributes(
  sequence: number,
  bytes: number,
  compressed: boolean,
): Record<string, number> {
  return compressed
    ? { 'sequence-number': sequence, 'message-size-compressed': bytes }
    : { 'sequence-number': sequence, 'message-size': bytes };
}
