// One attempt of a call on an `xds:` channel, followed from its picks to its status (decision
// 0063). The root picker hands each completed pick to `picked()`: the attempt marks the pick's
// metadata (the very object grpc-js then creates the stream with) and gives grpc-js a subchannel
// whose real subchannel's createCall finds the mark. The attempt then stands between grpc-js
// and the stream, as both the stream grpc-js writes to and the listener the stream answers, so
// it sees the attempt's metadata (A72 injects its span there), its messages as they cross the
// wire (compressed, framed) and its status, with no allocation per message.
import { experimental, status, type Metadata, type StatusObject } from '@grpc/grpc-js';
import type { AttemptTracer, ClientCallTracer, PickedBackend } from './call-tracer';
import { SubchannelWrapper } from '../lb/common/subchannel-wrapper';

type PickResult = experimental.PickResult;
type SubchannelInterface = experimental.SubchannelInterface;
type RealSubchannel = ReturnType<SubchannelInterface['getRealSubchannel']>;
type SubchannelCall = ReturnType<RealSubchannel['createCall']>;
type CallListener = Parameters<RealSubchannel['createCall']>[3];
type MessageContext = Parameters<SubchannelCall['sendMessageWithContext']>[0];

/** gRPC's frame header (compressed flag, length): not message bytes (A66). */
const FRAME_HEADER = 5;

/** On a completed pick's metadata: the attempt the stream is for. */
const ATTEMPT: unique symbol = Symbol('xds_client.attempt');
/** On a picked subchannel: its telemetry wrapper, made once. */
const WRAPPER: unique symbol = Symbol('xds_client.telemetry_subchannel');

type MarkedMetadata = Metadata & { [ATTEMPT]?: XdsAttempt };
type MarkedSubchannel = SubchannelInterface & { [WRAPPER]?: TelemetrySubchannel };

export class XdsAttempt implements PickedBackend, SubchannelCall, CallListener {
  backendService = '';
  locality = '';
  delayed = false;
  ended = false;
  private readonly tracer: AttemptTracer;
  private call: SubchannelCall | undefined;
  private listener: CallListener | undefined;

  constructor(callTracer: ClientCallTracer, previousAttempts: number, transparentRetry: boolean) {
    this.tracer = callTracer.startAttempt({ transparentRetry, previousAttempts, backend: this });
  }

  /** The pick's result as grpc-js gets it: a completed one through the attempt's subchannel. */
  picked(result: PickResult, metadata: Metadata): PickResult {
    switch (result.pickResultType) {
      case experimental.PickResultType.COMPLETE:
        (metadata as MarkedMetadata)[ATTEMPT] = this;
        return { ...result, subchannel: telemetrySubchannelOf(result.subchannel!) };
      case experimental.PickResultType.TRANSIENT_FAILURE:
        // A wait-for-ready call waits for another pick; any other fails now, as a drop does.
        if (!metadata.getOptions().waitForReady) {
          this.end(result.status!.code, result.status!.details);
          return result;
        }
        this.delayed = true;
        return result;
      case experimental.PickResultType.DROP:
        this.end(result.status!.code, result.status!.details);
        return result;
      default:
        this.delayed = true;
        return result;
    }
  }

  /** The attempt's stream, created on `real` through this attempt. */
  createCall(
    real: RealSubchannel,
    metadata: Metadata,
    host: string,
    method: string,
    listener: CallListener,
    callId?: number,
  ): SubchannelCall {
    this.listener = listener;
    this.tracer.sendingMetadata(metadata);
    this.tracer.picked();
    try {
      this.call = real.createCall(metadata, host, method, this, callId);
    } catch (e) {
      this.end(status.INTERNAL, `Failed to start HTTP/2 stream with error ${String(e)}`);
      throw e;
    }
    return this;
  }

  end(code: status, details: string): void {
    if (this.ended) return;
    this.ended = true;
    try {
      this.tracer.end(code, details);
    } catch {
      // A tracer must not fail the call (call-tracer.ts).
    }
  }

  // The stream, as grpc-js uses it.
  sendMessageWithContext(context: MessageContext, message: Buffer): void {
    this.tracer.sentMessage(message.length - FRAME_HEADER, message[0] === 1);
    this.call!.sendMessageWithContext(context, message);
  }
  cancelWithStatus(code: status, details: string): void {
    this.call!.cancelWithStatus(code, details);
  }
  getPeer(): string {
    return this.call!.getPeer();
  }
  startRead(): void {
    this.call!.startRead();
  }
  halfClose(): void {
    this.call!.halfClose();
  }
  getCallNumber(): number {
    return this.call!.getCallNumber();
  }
  getDeadlineInfo(): string[] {
    return this.call!.getDeadlineInfo();
  }
  getAuthContext(): ReturnType<SubchannelCall['getAuthContext']> {
    return this.call!.getAuthContext();
  }

  // The listener, as the stream answers it.
  onReceiveMetadata(metadata: Metadata): void {
    this.listener!.onReceiveMetadata(metadata);
  }
  onReceiveMessage(message: Buffer): void {
    this.tracer.receivedMessage(message.length - FRAME_HEADER, message[0] === 1);
    this.listener!.onReceiveMessage(message);
  }
  onReceiveStatus(end: StatusObject): void {
    this.end(end.code, end.details);
    this.listener!.onReceiveStatus(end);
  }
}

/** `subchannel`'s telemetry wrapper, made at its first pick and kept on it. */
function telemetrySubchannelOf(subchannel: SubchannelInterface): SubchannelInterface {
  const marked = subchannel as MarkedSubchannel;
  return (marked[WRAPPER] ??= new TelemetrySubchannel(subchannel));
}

/**
 * Everything as the subchannel it wraps, but its real subchannel creates a stream marked with
 * an attempt through that attempt (any other as the real one would).
 */
class TelemetrySubchannel extends SubchannelWrapper {
  private real: RealSubchannel | undefined;
  private view: RealSubchannel | undefined;

  override getRealSubchannel(): RealSubchannel {
    const real = this.child.getRealSubchannel();
    if (real !== this.real || !this.view) {
      this.real = real;
      // The real subchannel itself, but for createCall: grpc-js calls nothing else on it.
      const view = Object.create(real) as RealSubchannel;
      view.createCall = (metadata, host, method, listener, callId) => {
        const attempt = (metadata as MarkedMetadata)[ATTEMPT];
        return attempt
          ? attempt.createCall(real, metadata, host, method, listener, callId)
          : real.createCall(metadata, host, method, listener, callId);
      };
      this.view = view;
    }
    return this.view;
  }
}
