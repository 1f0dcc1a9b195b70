// A72's server span: `Recv.<service>.<method>`, a child of the span context the caller sent in
// its metadata, with an event per message each way, and the status sent as the span's status.
import type { Metadata, status } from '@grpc/grpc-js';
import type { Context, Span, SpanKind, TextMapPropagator, Tracer } from '@opentelemetry/api';
import type { ServerCallTracer } from './call-tracer';
import { metadataGetter } from './grpc-trace-bin';
import { endSpan, messageEventAttributes, spanSuffix } from './span-names';
import { otelApi } from '../../client/metrics/otel-api';

/** SpanKind.SERVER, without loading the API for its enum. */
const SERVER = 1 as SpanKind;

export class ServerCallSpan implements ServerCallTracer {
  private readonly span: Span;
  /** The context with this call's span active: the handler runs in it. */
  readonly context: Context;
  private sent = 0;
  private received = 0;

  constructor(tracer: Tracer, propagator: TextMapPropagator, path: string, metadata: Metadata) {
    const api = otelApi();
    const parent = propagator.extract(api.ROOT_CONTEXT, metadata, metadataGetter);
    this.span = tracer.startSpan(`Recv.${spanSuffix(path)}`, { kind: SERVER }, parent);
    this.context = api.trace.setSpan(parent, this.span);
  }

  sentMessage(size: number, compressedSize: number | undefined): void {
    const attributes = messageEventAttributes(this.sent++, size, compressedSize);
    this.span.addEvent('Outbound message', attributes);
  }

  receivedMessage(size: number, compressedSize: number | undefined): void {
    const attributes = messageEventAttributes(this.received++, size, compressedSize);
    this.span.addEvent('Inbound message', attributes);
  }

  end(code: status, details: string): void {
    endSpan(this.span, code, details);
  }
}
