// The server side of per-call telemetry (A66's metrics, A72's span) as one grpc-js server
// interceptor. It must be the first in the server's list (nearest the transport) so that it
// sees every RPC another interceptor refuses, and it runs the handler with the call's span
// active, so that the application's own spans are its children. XdsServer installs it on its
// ports; `serverTelemetryInterceptor()` gives it to plain grpc-js servers.
import {
  ServerInterceptingCall,
  status,
  type ServerInterceptingCallInterface,
  type ServerInterceptor,
} from '@grpc/grpc-js';
import type { Context } from '@opentelemetry/api';
import { serverCallOf, type ServerCallTracer } from './call-tracer';
import { serverCallInstruments } from './instruments';
import { LabelSets } from './label-sets';
import { checkTelemetryOptions, type TelemetryOptions } from './options';
import { ServerCallMetrics } from './server-metrics';
import { ServerCallSpan } from './server-span';
import { observeTransport } from './server-transport';
import { telemetryOf, telemetryNow, type Telemetry } from './telemetry';
import { otelApi } from '../../client/metrics/otel-api';

/** How much earlier than the server's deadline the client's may have passed (transit). */
const DEADLINE_SLACK_MS = 100;

/**
 * A66's server instruments and A72's server span for every RPC of a plain grpc-js server:
 * `new grpc.Server({ interceptors: [serverTelemetryInterceptor(), ...] })`, first in the list.
 * Without `options`, `register()`'s (else the global providers), read now. grpc-js answers a
 * method nobody registered before any interceptor runs: such RPCs are not recorded (an
 * XdsServer records them, unregistered-methods.ts).
 */
export function serverTelemetryInterceptor(options?: TelemetryOptions): ServerInterceptor {
  const telemetry =
    options === undefined ? telemetryNow() : telemetryOf(checkTelemetryOptions(options));
  return telemetry
    ? telemetryInterceptorFor(telemetry)
    : (_method, call) => new ServerInterceptingCall(call);
}

/** The interceptor recording each RPC that reaches a registered handler. */
export function telemetryInterceptorFor(telemetry: Telemetry): ServerInterceptor {
  const instruments = telemetry.meterProvider && serverCallInstruments(telemetry.meterProvider);
  const labels = new LabelSets(undefined);
  return (method, call) => {
    const record = new ServerCallRecord(
      instruments && new ServerCallMetrics(instruments, labels.of(method.path)),
    );
    const observed = observeTransport(call, record);
    const { tracer, propagator } = telemetry;
    return new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, nextMetadata) => {
            if (tracer && propagator) {
              record.addSpan(new ServerCallSpan(tracer, propagator, method.path, metadata));
            }
            record.within(() => nextMetadata(metadata));
          },
          onReceiveMessage: (message, nextMessage) => record.within(() => nextMessage(message)),
          onReceiveHalfClose: (nextHalfClose) => record.within(nextHalfClose),
          onCancel: () => record.cancelled(call),
        }),
      // Without grpc-js's innermost call, what an interceptor sees: the handler's messages
      // (serialized again to be measured) and its statuses.
      sendMessage: (message, next) => {
        if (!observed) record.sent(method.responseSerialize(message).length, undefined);
        next(message);
      },
      sendStatus: (sent, next) => {
        if (!observed) record.status(sent.code ?? status.UNKNOWN, sent.details ?? '');
        next(sent);
      },
    });
  };
}

/** One RPC's tracers, ended once, with the context its handler runs in. */
class ServerCallRecord {
  private tracer: ServerCallTracer | undefined;
  private context: Context | undefined;
  private ended = false;

  constructor(private readonly metrics: ServerCallMetrics | undefined) {
    this.tracer = metrics;
  }

  addSpan(span: ServerCallSpan): void {
    this.tracer = serverCallOf(this.metrics ? [this.metrics, span] : [span]);
    this.context = span.context;
  }

  /** Runs `step` of grpc-js's handler with the call's span active. */
  within(step: () => void): void {
    if (!this.context) return step();
    otelApi().context.with(this.context, step);
  }

  sent(size: number, compressedSize: number | undefined): void {
    if (!this.ended) this.tracer?.sentMessage(size, compressedSize);
  }

  received(size: number, compressedSize: number | undefined): void {
    if (!this.ended) this.tracer?.receivedMessage(size, compressedSize);
  }

  status(code: number, details: string): void {
    if (this.ended) return;
    this.ended = true;
    this.tracer?.end(code, details);
  }

  /**
   * The stream closed (after a status, or instead of one when the client cancelled or its
   * deadline passed first: grpc-js's own deadline timer sends DEADLINE_EXCEEDED, seen as a
   * status). The client's deadline comes before the server's copy of it by the headers'
   * transit time, so a cancellation that close to the server's deadline is the deadline's.
   */
  cancelled(call: ServerInterceptingCallInterface): void {
    const deadline = Number(call.getDeadline());
    const expired = Number.isFinite(deadline) && Date.now() >= deadline - DEADLINE_SLACK_MS;
    if (expired) this.status(status.DEADLINE_EXCEEDED, 'Deadline exceeded');
    else this.status(status.CANCELLED, 'Cancelled by the client');
  }
}
