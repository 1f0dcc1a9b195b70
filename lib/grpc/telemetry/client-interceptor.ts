// A66's client instruments and A72's client spans for channels that do not use xDS, as a grpc-js
// client interceptor: the same tracers as `xds:` channels, driven from what an interceptor sees.
// An interceptor runs above grpc-js's retries and below nothing of grpc-js's own, so a call is
// one attempt, started and ended with the call; its messages are objects, not bytes (see
// `messageBytes`). On an `xds:` target it does nothing: the plugin's own hooks record those
// channels (decision 0063), and two records of one call would double every count.
import type * as grpc from '@grpc/grpc-js';
import { InterceptingCall } from '@grpc/grpc-js';
import type { AttemptTracer, ClientCallTracer, PickedBackend } from './call-tracer';
import { channelTelemetryNow, type ChannelTelemetry } from './channel-telemetry';
import { canonicalTarget } from './labels';

export interface ClientTelemetryInterceptorOptions {
  /** The channel's target, as given to grpc-js (A66's `grpc.target`, in canonical form). */
  readonly target: string;
}

/** A call through an interceptor is routed nowhere the plugin knows, and never waits for a pick. */
const NOWHERE: PickedBackend = { backendService: '', locality: '', delayed: false };

/**
 * A grpc-js client interceptor recording A66's client metrics and A72's client spans for a
 * channel to `target`, with the telemetry `register()` configured (or the global providers)
 * when it is made. Give it to the client: `new Client(target, creds, { interceptors: [it] })`.
 */
export function clientTelemetryInterceptor(
  options: ClientTelemetryInterceptorOptions,
): grpc.Interceptor {
  const target = options?.target;
  if (typeof target !== 'string') {
    throw new TypeError('clientTelemetryInterceptor(options): target must be a string');
  }
  const telemetry = canonicalTarget(target).startsWith('xds:')
    ? undefined
    : channelTelemetryNow(target);
  if (!telemetry) return passThrough;
  return (callOptions, nextCall) => telemetryCall(telemetry, callOptions, nextCall);
}

type NextCall = Parameters<grpc.Interceptor>[1];

/**
 * The next call itself: grpc-js only calls its interface, whatever the Interceptor type says,
 * and wrapping it would cost an object per call for nothing.
 */
const passThrough: grpc.Interceptor = (callOptions, nextCall) =>
  nextCall(callOptions) as InterceptingCall;

function telemetryCall(
  telemetry: ChannelTelemetry,
  callOptions: grpc.InterceptorOptions,
  nextCall: NextCall,
): InterceptingCall {
  const definition = callOptions.method_definition;
  let call: ClientCallTracer;
  let attempt: AttemptTracer;
  try {
    call = telemetry.startCall(definition.path);
    attempt = call.startAttempt({ transparentRetry: false, previousAttempts: 0, backend: NOWHERE });
  } catch {
    return passThrough(callOptions, nextCall);
  }
  let ended = false;
  const requester: grpc.Requester = {
    start(metadata, _listener, next) {
      attempt.sendingMetadata(metadata);
      attempt.picked();
      next(metadata, {
        onReceiveMessage(message, nextMessage) {
          attempt.receivedMessage(messageBytes(message, undefined), false);
          nextMessage(message);
        },
        onReceiveStatus(status, nextStatus) {
          if (!ended) {
            ended = true;
            attempt.end(status.code, status.details);
            call.end(status.code, status.details);
          }
          nextStatus(status);
        },
      });
    },
    sendMessage(message, next) {
      attempt.sentMessage(messageBytes(message, definition.requestSerialize), false);
      next(message);
    },
  };
  return new InterceptingCall(nextCall(callOptions), requester);
}

/**
 * A message's bytes as an interceptor can tell them: a Buffer's length (a client with raw-bytes
 * serializers); else the request serialized again with the method's serializer; a response
 * object counts 0 (grpc-js gives an interceptor no response serializer). Uncompressed always.
 */
function messageBytes(message: unknown, serialize: ((m: unknown) => Buffer) | undefined): number {
  if (Buffer.isBuffer(message)) return message.length;
  if (!serialize) return 0;
  try {
    return serialize(message).length;
  } catch {
    return 0;
  }
}
