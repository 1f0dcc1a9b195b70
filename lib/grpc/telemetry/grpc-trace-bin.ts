// A72's `grpc-trace-bin` propagator: a span context in OpenCensus's binary format (version 0;
// field 0 the 16-byte trace id, field 1 the 8-byte span id, field 2 one byte of trace flags),
// the format gRPC's other languages send, and a TextMap carrier over grpc-js Metadata. The
// OpenTelemetry API is loaded only when a span is injected or extracted.
import type { Metadata } from '@grpc/grpc-js';
import type { Context, TextMapGetter, TextMapPropagator, TextMapSetter } from '@opentelemetry/api';
import { otelApi } from '../../client/metrics/otel-api';

export const GRPC_TRACE_BIN = 'grpc-trace-bin';

/**
 * Metadata as an OpenTelemetry carrier. A `-bin` key carries bytes, which a TextMap
 * propagator sees as base64 (what A72 asks of each language's carrier).
 */
export const metadataSetter: TextMapSetter<Metadata> = {
  set(carrier, key, value) {
    if (key.endsWith('-bin')) carrier.set(key, Buffer.from(value, 'base64'));
    else carrier.set(key, value);
  },
};

export const metadataGetter: TextMapGetter<Metadata> = {
  keys(carrier) {
    return Object.keys(carrier.getMap());
  },
  get(carrier, key) {
    const values = carrier.get(key);
    if (values.length === 0) return undefined;
    const strings = values.map((v) => (Buffer.isBuffer(v) ? v.toString('base64') : v));
    return strings.length === 1 ? strings[0] : strings;
  },
};

const TRACE_ID = 0;
const SPAN_ID = 1;
const TRACE_OPTIONS = 2;
const ENCODED_LENGTH = 29;

/** A72's `grpc-trace-bin` propagator, for `register({ propagator })`. */
export function grpcTraceBinPropagator(): TextMapPropagator {
  return new GrpcTraceBinPropagator();
}

class GrpcTraceBinPropagator implements TextMapPropagator {
  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    const { trace, isSpanContextValid } = otelApi();
    const span = trace.getSpanContext(context);
    if (!span || !isSpanContextValid(span)) return;
    const bytes = Buffer.alloc(ENCODED_LENGTH);
    bytes[0] = 0; // version
    bytes[1] = TRACE_ID;
    bytes.write(span.traceId, 2, 16, 'hex');
    bytes[18] = SPAN_ID;
    bytes.write(span.spanId, 19, 8, 'hex');
    bytes[27] = TRACE_OPTIONS;
    bytes[28] = span.traceFlags & 1;
    setter.set(carrier, GRPC_TRACE_BIN, bytes.toString('base64'));
  }

  extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    const value = getter.get(carrier, GRPC_TRACE_BIN);
    const text = Array.isArray(value) ? value[0] : value;
    if (text === undefined) return context;
    const parsed = parse(Buffer.from(text, 'base64'));
    if (!parsed) return context;
    const { trace, isSpanContextValid } = otelApi();
    const span = { ...parsed, isRemote: true };
    return isSpanContextValid(span) ? trace.setSpanContext(context, span) : context;
  }

  fields(): string[] {
    return [GRPC_TRACE_BIN];
  }
}

/** The ids of an encoded span context; undefined when the bytes are not version 0's format. */
function parse(bytes: Buffer): { traceId: string; spanId: string; traceFlags: number } | undefined {
  if (bytes.length < ENCODED_LENGTH - 2 || bytes[0] !== 0) return undefined;
  if (bytes[1] !== TRACE_ID || bytes[18] !== SPAN_ID) return undefined;
  const traceId = bytes.subarray(2, 18).toString('hex');
  const spanId = bytes.subarray(19, 27).toString('hex');
  // The trace options field is optional in the format: absent, the span is not sampled.
  const traceFlags =
    bytes.length >= ENCODED_LENGTH && bytes[27] === TRACE_OPTIONS ? bytes[28]! & 1 : 0;
  return { traceId, spanId, traceFlags };
}
