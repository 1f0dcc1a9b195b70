// A66's server instruments for one call: `grpc.server.call.started` when the call's headers
// arrive, then, with the status sent, its duration and the compressed bytes each way, labelled
// with the method and the status.
import type { Attributes } from '@opentelemetry/api';
import type { status } from '@grpc/grpc-js';
import type { ServerCallTracer } from './call-tracer';
import { secondsSince } from './client-metrics';
import type { ServerCallInstruments } from './instruments';
import { statusLabel } from './labels';

export class ServerCallMetrics implements ServerCallTracer {
  /** performance.now() when the call started: the client's clock (client-metrics.ts). */
  private readonly start = performance.now();
  private sentBytes = 0;
  private receivedBytes = 0;

  /** Counts the call as started; `method` is its `grpc.method` value (A66's, `other` included). */
  constructor(
    private readonly instruments: ServerCallInstruments,
    private readonly method: string,
  ) {
    instruments.callStarted.add(1, { 'grpc.method': method });
  }

  sentMessage(size: number, compressedSize: number | undefined): void {
    this.sentBytes += compressedSize ?? size;
  }

  receivedMessage(size: number, compressedSize: number | undefined): void {
    this.receivedBytes += compressedSize ?? size;
  }

  end(code: status): void {
    const labels: Attributes = { 'grpc.method': this.method, 'grpc.status': statusLabel(code) };
    this.instruments.callDuration.record(secondsSince(this.start), labels);
    this.instruments.callSentSize.record(this.sentBytes, labels);
    this.instruments.callRcvdSize.record(this.receivedBytes, labels);
  }
}
