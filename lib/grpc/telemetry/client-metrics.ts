// A66's client instruments, recorded by a ClientCallTracer (one per call) and an AttemptTracer
// (one per attempt): attempts started, each attempt's duration and compressed message bytes
// (with A89's backend service and A78's locality when the application named them, A79), and
// the call's duration. One ClientMetrics per channel holds what every call shares.
import type { Attributes, MeterProvider } from '@opentelemetry/api';
import type { status } from '@grpc/grpc-js';
import type { AttemptOptions, AttemptTracer, ClientCallTracer, PickedBackend } from './call-tracer';
import { clientCallInstruments, type ClientCallInstruments } from './instruments';
import { methodLabel, statusLabel } from './labels';
import type { OptionalLabel } from './options';

export const METHOD = 'grpc.method';
export const TARGET = 'grpc.target';
export const STATUS = 'grpc.status';
export const BACKEND_SERVICE: OptionalLabel = 'grpc.lb.backend_service';
export const LOCALITY: OptionalLabel = 'grpc.lb.locality';

/** The metrics of one channel's calls. */
export class ClientMetrics {
  readonly instruments: ClientCallInstruments;
  readonly backendService: boolean;
  readonly locality: boolean;

  constructor(
    provider: MeterProvider,
    /** A66's canonical target of the channel. */
    readonly target: string,
    optionalLabels: ReadonlySet<OptionalLabel>,
  ) {
    this.instruments = clientCallInstruments(provider);
    this.backendService = optionalLabels.has(BACKEND_SERVICE);
    this.locality = optionalLabels.has(LOCALITY);
  }

  /** The tracer of one call to `path` (`/pkg.Service/Method`) started at `start`. */
  startCall(path: string, start: number): ClientCallTracer {
    return new CallMetrics(this, methodLabel(path), start);
  }
}

/** Seconds since `start` (a performance.now() reading). */
export function secondsSince(start: number): number {
  return (performance.now() - start) / 1000;
}

class CallMetrics implements ClientCallTracer {
  /** grpc.method and grpc.target: attempt.started's labels (the others are built whole). */
  readonly labels: Attributes;

  constructor(
    readonly metrics: ClientMetrics,
    readonly method: string,
    /** performance.now() at the call's start. */
    private readonly start: number,
  ) {
    this.labels = { [METHOD]: method, [TARGET]: metrics.target };
  }

  startAttempt(options: AttemptOptions): AttemptTracer {
    this.metrics.instruments.attemptStarted.add(1, this.labels);
    return new AttemptMetrics(this, options.backend);
  }

  resolutionDelayed(): void {}

  end(code: status): void {
    const labels = {
      [METHOD]: this.method,
      [TARGET]: this.metrics.target,
      [STATUS]: statusLabel(code),
    };
    this.metrics.instruments.callDuration.record(secondsSince(this.start), labels);
  }
}

class AttemptMetrics implements AttemptTracer {
  private readonly start = performance.now();
  private sent = 0;
  private received = 0;

  constructor(
    private readonly call: CallMetrics,
    private readonly backend: PickedBackend,
  ) {}

  sendingMetadata(): void {}
  picked(): void {}

  sentMessage(bytes: number): void {
    this.sent += bytes;
  }

  receivedMessage(bytes: number): void {
    this.received += bytes;
  }

  end(code: status): void {
    const { metrics, method } = this.call;
    const labels: Attributes = {
      [METHOD]: method,
      [TARGET]: metrics.target,
      [STATUS]: statusLabel(code),
    };
    if (metrics.backendService) labels[BACKEND_SERVICE] = this.backend.backendService;
    if (metrics.locality) labels[LOCALITY] = this.backend.locality;
    const { attemptDuration, attemptSentSize, attemptRcvdSize } = metrics.instruments;
    attemptDuration.record(secondsSince(this.start), labels);
    attemptSentSize.record(this.sent, labels);
    attemptRcvdSize.record(this.received, labels);
  }
}
