// A66's client instruments, recorded by a ClientCallTracer (one per call) and an AttemptTracer
// (one per attempt): attempts started, each attempt's duration and compressed message bytes
// (with A89's backend service and A78's locality when the application named them, A79), and
// the call's duration. One ClientMetrics per channel holds what every call shares, the label
// sets included (label-sets.ts): a record allocates nothing of its own.
import type { MeterProvider } from '@opentelemetry/api';
import type { status } from '@grpc/grpc-js';
import type { AttemptOptions, AttemptTracer, ClientCallTracer, PickedBackend } from './call-tracer';
import { BACKEND_SERVICE, LabelSets, LOCALITY, type MethodLabels } from './label-sets';
import { clientCallInstruments, secondsSince, type ClientCallInstruments } from './instruments';
import type { OptionalLabel } from './options';

/** The metrics of one channel's calls. */
export class ClientMetrics {
  readonly instruments: ClientCallInstruments;
  private readonly labels: LabelSets;

  constructor(
    provider: MeterProvider,
    /** A66's canonical target of the channel. */
    target: string,
    optionalLabels: ReadonlySet<OptionalLabel>,
  ) {
    this.instruments = clientCallInstruments(provider);
    this.labels = new LabelSets(
      target,
      optionalLabels.has(BACKEND_SERVICE),
      optionalLabels.has(LOCALITY),
    );
  }

  /** The tracer of one call to `path` (`/pkg.Service/Method`) started at `start`. */
  startCall(path: string, start: number): ClientCallTracer {
    return new CallMetrics(this.instruments, this.labels.of(path), start);
  }
}

class CallMetrics implements ClientCallTracer {
  constructor(
    readonly instruments: ClientCallInstruments,
    readonly labels: MethodLabels,
    /** performance.now() at the call's start. */
    private readonly start: number,
  ) {}

  startAttempt(options: AttemptOptions): AttemptTracer {
    this.instruments.attemptStarted.add(1, this.labels.started);
    return new AttemptMetrics(this, options.backend);
  }

  resolutionDelayed(): void {}

  end(code: status): void {
    this.instruments.callDuration.record(secondsSince(this.start), this.labels.callEnded(code));
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
    const { instruments, labels } = this.call;
    const { backendService, locality } = this.backend;
    const attributes = labels.attemptEnded(code, backendService, locality);
    instruments.attemptDuration.record(secondsSince(this.start), attributes);
    instruments.attemptSentSize.record(this.sent, attributes);
    instruments.attemptRcvdSize.record(this.received, attributes);
  }
}
