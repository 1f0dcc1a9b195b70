// A66's server instruments for one call: `grpc.server.call.started` when the call's headers
// arrive, then, with the status sent, its duration and the compressed bytes each way, labelled
// with the method and the status.
import type { Attributes } from '@opentelemetry/api';
import type { status } from '@grpc/grpc-js';
import type { MessageSize, ServerCallTracer } from './call-tracer';
import type { ServerCallInstruments } from './instruments';
import { statusLabel } from './labels';

export class ServerCallMetrics implements ServerCallTracer {
  private readonly started = process.hrtime.bigint();
  private sentBytes = 0;
  private receivedBytes = 0;

  /** Counts the call as started; `method` is its `grpc.method` value (A66's, `other` included). */
  constructor(
    private readonly instruments: ServerCallInstruments,
    private readonly method: string,
  ) {
    instruments.callStarted.add(1, { 'grpc.method': method });
  }

  sentMessage(message: MessageSize): void {
    this.sentBytes += message.compressed ?? message.size;
  }

  receivedMessage(message: MessageSize): void {
    this.receivedBytes += message.compressed ?? message.size;
  }

  end(code: status): void {
    const labels: Attributes = { 'grpc.method': this.method, 'grpc.status': statusLabel(code) };
    const seconds = Number(process.hrtime.bigint() - this.started) / 1e9;
    this.instruments.callDuration.record(seconds, labels);
    this.instruments.callSentSize.record(this.sentBytes, labels);
    this.instruments.callRcvdSize.record(this.receivedBytes, labels);
  }
}
