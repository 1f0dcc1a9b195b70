// What per-call telemetry a channel or server made now gets: the providers `register()` was
// given, else the global ones an application registered, resolved once when the channel's
// resolver or the XdsServer is made (as A66 and A72 plugins are configured on channels and
// servers). With neither, `telemetryNow()` is undefined and no per-call code runs; the
// OpenTelemetry API is not even loaded unless a global provider was registered through it.
import type { MeterProvider, TextMapPropagator, Tracer } from '@opentelemetry/api';
import { meterProviderFor, otelApi, tracerProviderFor } from '../../client/metrics/otel-api';
import { VERSION } from '../../version';
import { checkTelemetryOptions, type OptionalLabel, type TelemetryOptions } from './options';

/** The telemetry of one channel or server. */
export interface Telemetry {
  /** A66's and A94's metrics go here; undefined: no metrics. */
  readonly meterProvider: MeterProvider | undefined;
  /** A72's spans come from here; undefined: no spans, no propagation. */
  readonly tracer: Tracer | undefined;
  /** Injects and extracts the span context in metadata (with a tracer only). */
  readonly propagator: TextMapPropagator | undefined;
  /** The optional labels the application named. */
  readonly optionalLabels: ReadonlySet<OptionalLabel>;
  /** Whether a server method with no handler is recorded by name (else `other`). */
  readonly recordsMethod: (method: string) => boolean;
}

let configured: TelemetryOptions = {};

/** Sets the options of channels and servers made from now on (`register()`'s). */
export function configureTelemetry(options: unknown): void {
  configured = checkTelemetryOptions(options);
}

/** The telemetry for a channel or server made now; undefined when nothing would record. */
export function telemetryNow(): Telemetry | undefined {
  return telemetryOf(configured);
}

/** The telemetry `options` (already checked) give; undefined when nothing would record. */
export function telemetryOf(options: TelemetryOptions): Telemetry | undefined {
  const meterProvider = meterProviderFor(options.meterProvider);
  const tracer = tracerFor(options);
  if (meterProvider === undefined && tracer === undefined) return undefined;
  const filter = options.methodAttributeFilter;
  return {
    meterProvider,
    tracer,
    propagator: tracer === undefined ? undefined : (options.propagator ?? otelApi().propagation),
    optionalLabels: new Set(options.optionalLabels ?? []),
    recordsMethod: filter ? (method) => safely(() => filter(method)) : () => false,
  };
}

function tracerFor(options: TelemetryOptions): Tracer | undefined {
  return tracerProviderFor(options.tracerProvider)?.getTracer('xds-client', VERSION);
}

/** An application's filter that throws records `other`: it must not fail the RPC. */
function safely(run: () => boolean): boolean {
  try {
    return run() === true;
  } catch {
    return false;
  }
}
