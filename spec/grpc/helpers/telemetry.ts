// In-memory OpenTelemetry for the per-call telemetry specs (A66, A72, A89, A94): a MeterProvider
// whose points the spec reads with collect(), and a TracerProvider whose finished spans it reads,
// with an AsyncLocalStorage context manager so that a span made active around a call is the
// call's parent. Only the SDK is used here; the library sees only the API's interfaces.
import assert from 'node:assert/strict';
import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader, type HistogramMetricData } from '@opentelemetry/sdk-metrics';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace';

/** The SDK's reader with nothing to export to: specs call collect() themselves. */
class InMemoryReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** One data point: its labels, and a counter's value or a histogram's count, sum and buckets. */
export interface Point {
  readonly labels: Record<string, unknown>;
  /** A counter's value, or a histogram's count. */
  readonly value: number;
  /** A histogram's sum. */
  readonly sum?: number;
  /** A histogram's bucket boundaries. */
  readonly boundaries?: readonly number[];
}

export interface InMemoryMetrics {
  readonly provider: MeterProvider;
  /** Every point of the metric `name` (cumulative), with its unit. */
  read(name: string): Promise<{ unit: string | undefined; points: Point[] }>;
  shutdown(): Promise<void>;
}

export function inMemoryMetrics(): InMemoryMetrics {
  const reader = new InMemoryReader();
  const provider = new MeterProvider({ readers: [reader] });
  return {
    provider,
    async read(name) {
      const { resourceMetrics, errors } = await reader.collect();
      assert.deepEqual(errors, []);
      const found = resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .filter((m) => m.descriptor.name === name);
      const points = found.flatMap((m) =>
        m.dataPoints.map((p): Point => {
          const labels = { ...p.attributes };
          if (typeof p.value === 'number') return { labels, value: p.value };
          const histogram = p.value as HistogramMetricData['dataPoints'][number]['value'];
          return {
            labels,
            value: histogram.count,
            sum: histogram.sum ?? 0,
            boundaries: histogram.buckets.boundaries,
          };
        }),
      );
      return { unit: found[0]?.descriptor.unit, points };
    },
    shutdown: () => provider.shutdown(),
  };
}

/** The points of a metric as `label… → value` lines, sorted, for whole comparisons. */
export function pointLines(points: readonly Point[], keys: readonly string[]): string[] {
  return points.map((p) => `${keys.map((k) => String(p.labels[k])).join(' ')} → ${p.value}`).sort();
}

export interface InMemoryTraces {
  readonly provider: TracerProvider;
  /** The spans ended so far, in the order they ended. */
  spans(): ReadableSpan[];
  shutdown(): Promise<void>;
}

let contextManager: AsyncLocalStorageContextManager | undefined;

/**
 * A TracerProvider recording every span in memory. The first call installs an AsyncLocalStorage
 * context manager process-wide (OpenTelemetry allows one), so `context.with()` parents spans.
 */
export function inMemoryTraces(): InMemoryTraces {
  if (!contextManager) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  return {
    provider,
    spans: () => exporter.getFinishedSpans(),
    shutdown: async () => {
      await provider.shutdown();
      propagation.disable();
    },
  };
}
