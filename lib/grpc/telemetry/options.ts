// How per-call telemetry (gRFCs A66, A72, A89, A94) is switched on: the options `register()`
// takes, checked at once so that a wrong value fails where it is written, not at the first RPC.
import type { MeterProvider, TextMapPropagator, TracerProvider } from '@opentelemetry/api';

/**
 * The labels A66's per-attempt instruments and A94's subchannel instruments carry only when the
 * application names them (gRFC A79's optional labels): A89's backend service (the cluster an
 * attempt was routed to) and A78's locality.
 */
export type OptionalLabel = 'grpc.lb.backend_service' | 'grpc.lb.locality';

export const OPTIONAL_LABELS: readonly OptionalLabel[] = [
  'grpc.lb.backend_service',
  'grpc.lb.locality',
];

/** Per-call telemetry for `xds:` channels and XdsServers (docs/operations.md). */
export interface TelemetryOptions {
  /**
   * Where A66's per-call and A94's subchannel metrics go. Omitted: the global MeterProvider, if
   * the application registered one before the channel or server was made; else no metrics.
   */
  meterProvider?: MeterProvider;
  /**
   * Where A72's spans go. Omitted: the global TracerProvider, if the application registered
   * one; else no spans, and no trace context is sent or read.
   */
  tracerProvider?: TracerProvider;
  /**
   * How a span's context crosses the wire in metadata. Omitted: OpenTelemetry's global
   * propagator (W3C `traceparent` once an SDK registers it). `grpcTraceBinPropagator()` gives
   * A72's `grpc-trace-bin`.
   */
  propagator?: TextMapPropagator;
  /** The optional labels to record (A79): none unless named. */
  optionalLabels?: readonly OptionalLabel[];
  /**
   * A66: a method the server has no handler for is recorded as `other` (an attacker could make
   * the label's cardinality unbounded), unless this returns true for it.
   */
  methodAttributeFilter?: (method: string) => boolean;
}

/** `options` checked, or an Error naming the first wrong field. */
export function checkTelemetryOptions(options: unknown): TelemetryOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`register(options): options must be an object (got ${String(options)})`);
  }
  const o = options as Record<string, unknown>;
  const fail = (field: string, why: string): never => {
    throw new TypeError(`register(options): ${field} ${why}`);
  };
  if (o.meterProvider !== undefined && !hasMethod(o.meterProvider, 'getMeter')) {
    fail('meterProvider', 'must be an OpenTelemetry MeterProvider: it has no getMeter()');
  }
  if (o.tracerProvider !== undefined && !hasMethod(o.tracerProvider, 'getTracer')) {
    fail('tracerProvider', 'must be an OpenTelemetry TracerProvider: it has no getTracer()');
  }
  if (
    o.propagator !== undefined &&
    !(hasMethod(o.propagator, 'inject') && hasMethod(o.propagator, 'extract'))
  ) {
    fail('propagator', 'must be an OpenTelemetry TextMapPropagator: inject() and extract()');
  }
  if (o.optionalLabels !== undefined) {
    if (!Array.isArray(o.optionalLabels)) fail('optionalLabels', 'must be an array');
    (o.optionalLabels as unknown[]).forEach((label, i) => {
      if (!OPTIONAL_LABELS.includes(label as OptionalLabel)) {
        fail(
          `optionalLabels[${i}]`,
          `must be one of ${OPTIONAL_LABELS.join(', ')} (got ${JSON.stringify(label)})`,
        );
      }
    });
  }
  if (o.methodAttributeFilter !== undefined && typeof o.methodAttributeFilter !== 'function') {
    fail('methodAttributeFilter', 'must be a function');
  }
  return o as TelemetryOptions;
}

function hasMethod(value: unknown, name: string): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Record<string, unknown>)[name] === 'function'
  );
}
