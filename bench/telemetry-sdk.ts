// The OpenTelemetry SDK's providers for the benches that measure per-call telemetry
// (rpc-hot.ts, rpc-server.ts, telemetry-cost.ts): recording as an application's would, exporting nowhere.
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';

/**
 * What register() (or a telemetry interceptor) is given for a telemetry run, `metrics` or
 * `traces`: the SDK's providers, as rpc-child has them, exporting nowhere; `{}` for none.
 */
export function telemetryOptions(telemetry: string | undefined): {
  meterProvider?: MeterProvider;
  tracerProvider?: TracerProvider;
} {
  if (telemetry === undefined) return {};
  if (telemetry === 'metrics') {
    const sdk =
      require('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
    class NeverCollected extends sdk.MetricReader {
      protected override async onShutdown(): Promise<void> {}
      protected override async onForceFlush(): Promise<void> {}
    }
    return { meterProvider: new sdk.MeterProvider({ readers: [new NeverCollected()] }) };
  }
  if (telemetry !== 'traces') throw new Error(`--telemetry: metrics or traces, not ${telemetry}`);
  const sdk = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const exporter = {
    export: (_spans: unknown, done: (result: { code: number }) => void) => done({ code: 0 }),
    shutdown: async () => {},
  };
  return {
    tracerProvider: new sdk.TracerProvider({
      spanProcessors: [new sdk.BatchSpanProcessor({ exporter })],
    }),
  };
}
