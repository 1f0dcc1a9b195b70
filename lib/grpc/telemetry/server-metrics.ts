// A66's server instruments for one call: `grpc.server.call.started` when the call's headers
// arrive, then, with the status sent, its duration and the compressed bytes each way, labelled
// with the method and the status (label sets made once per method and status, label-sets.ts).
import type { status } from '@grpc/grpc-js';
import type { ServerCallTracer } from './call-tracer';
import { secondsSince, type ServerCallInstruments } from './instruments';
import type { MethodLabels } from './label-sets';

export class ServerCallMetrics implements ServerCallTracer {
  /** performance.now() when the call started: the client's clock too. */
  private readonly start = performance.now();
  private sentBytes = 0;
  private receivedBytes = 0;

  /** Counts the call as started; `labels` are its method's (A66's value, `other` included). */
  constructor(
    private readonly instruments: ServerCallInstruments,
    private readonly labels: MethodLabels,
  ) {
    instruments.callStarted.add(1, labels.started);
  }

  sentMessage(size: number, compressedSize: number | undefined): void {
    this.sentBytes += compressedSize ?? size;
  }

  receivedMessage(size: number, compressedSize: number | undefined): void {
    this.receivedBytes += compressedSize ?? size;
  }

  end(code: status): void {
    const labels = this.labels.callEnded(code);
    this.instruments.callDuration.record(secondsSince(this.start), labels);
    this.instruments.callSentSize.record(this.sentBytes, labels);
    this.instruments.callRcvdSize.record(this.receivedBytes, labels);
  }
}
