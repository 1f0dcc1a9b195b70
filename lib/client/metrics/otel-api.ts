// The one way the library reaches @opentelemetry/api at run time (decision 0020): loaded on
// first use, never at import, and a provider taken from the API's globals only when an
// application registered one there (checked without loading the API, ~15 ms in a fresh process).
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';

type Api = typeof import('@opentelemetry/api');

let api: Api | undefined;

/** The API module, loaded by the first caller. */
export function otelApi(): Api {
  return (api ??= require('@opentelemetry/api') as Api);
}

/** The API's process-wide slot (major version 1): global providers are registered here. */
const OTEL_API_GLOBAL = Symbol.for('opentelemetry.js.api.1');

function registeredGlobally(kind: 'metrics' | 'trace'): boolean {
  const slot = (globalThis as Record<symbol, Record<string, unknown> | undefined>)[OTEL_API_GLOBAL];
  return slot?.[kind] !== undefined;
}

/** Whether there is a provider to meter through (`meterProviderFor`), without loading the API. */
export function meterProviderGiven(option: MeterProvider | undefined): boolean {
  return option !== undefined || registeredGlobally('metrics');
}

/** The provider to meter through: the option, else the global one if one is registered. */
export function meterProviderFor(option: MeterProvider | undefined): MeterProvider | undefined {
  if (option !== undefined) return option;
  return registeredGlobally('metrics') ? otelApi().metrics.getMeterProvider() : undefined;
}

/** The provider to trace through: the option, else the global one if one is registered. */
export function tracerProviderFor(option: TracerProvider | undefined): TracerProvider | undefined {
  if (option !== undefined) return option;
  return registeredGlobally('trace') ? otelApi().trace.getTracerProvider() : undefined;
}
