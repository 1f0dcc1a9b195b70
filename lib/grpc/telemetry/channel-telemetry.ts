// The client telemetry of one channel: its metrics (A66) and spans (A72), resolved once when the
// channel's resolver (or interceptor) is made, and the call tracer each call gets from them.
import type { ClientCallTracer } from './call-tracer';
import { clientCallOf } from './call-tracer';
import { ClientMetrics } from './client-metrics';
import { canonicalTarget } from './labels';
import { telemetryNow, type Telemetry } from './telemetry';

type Spans = import('./client-spans').ClientSpans;

export class ChannelTelemetry {
  private readonly metrics: ClientMetrics | undefined;
  private readonly spans: Spans | undefined;

  constructor(telemetry: Telemetry, target: string) {
    const { meterProvider, tracer, propagator } = telemetry;
    this.metrics =
      meterProvider &&
      new ClientMetrics(meterProvider, canonicalTarget(target), telemetry.optionalLabels);
    if (tracer && propagator) {
      // Required here: the spans module loads @opentelemetry/api, which nothing else needs.
      const { ClientSpans } = require('./client-spans') as typeof import('./client-spans');
      this.spans = new ClientSpans(tracer, propagator);
    }
  }

  /** The tracer of a call to `path` started at `start` (a performance.now() reading), or now. */
  startCall(path: string, start = performance.now()): ClientCallTracer {
    const { metrics, spans } = this;
    if (metrics && spans) {
      return clientCallOf([metrics.startCall(path, start), spans.startCall(path, start)])!;
    }
    return (metrics ?? spans)!.startCall(path, start);
  }
}

/** The telemetry of a channel to `target` made now; undefined when nothing records. */
export function channelTelemetryNow(target: string): ChannelTelemetry | undefined {
  const telemetry = telemetryNow();
  return telemetry && new ChannelTelemetry(telemetry, target);
}
