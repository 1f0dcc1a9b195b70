// RPCs for a method an XdsServer has no handler for. grpc-js answers them UNIMPLEMENTED from its
// handler lookup, before any interceptor runs, so the telemetry interceptor never sees them;
// A66 still counts them (as `other`) and A72 still gives them a server span. The server's own
// lookup is the one place that sees such an RPC, so it is wrapped (decision 0066), and, for the
// span, the stream handlers around it, which hold the request's headers (decision 0078).
import type { IncomingHttpHeaders } from 'node:http2';
import { Metadata, status, type Server } from '@grpc/grpc-js';
import { serverCallInstruments } from './instruments';
import { LabelSets, MethodLabels } from './label-sets';
import { methodLabel, OTHER_METHOD } from './labels';
import { ServerCallMetrics } from './server-metrics';
import { ServerCallSpan } from './server-span';
import type { Telemetry } from './telemetry';

/** A server's label sets: no target, no optional labels. */
const SERVER_LABELS = new LabelSets(undefined);

type StreamHandler = (
  this: Server,
  interceptors: unknown,
  stream: unknown,
  headers: IncomingHttpHeaders,
) => void;

/** The grpc-js 1.14 Server methods wrapped here (looked up by name, each optional). */
interface ServerInternals {
  _retrieveHandler?: (this: Server, path: string) => unknown;
  _streamHandler?: StreamHandler;
  _channelzHandler?: StreamHandler;
}

/**
 * Records each RPC `server` answers UNIMPLEMENTED for want of a handler. Call it before the
 * server makes its HTTP/2 servers (grpc-js binds the stream handlers then).
 */
export function recordUnregisteredMethods(server: Server, telemetry: Telemetry): void {
  const internals = server as unknown as ServerInternals;
  const lookup = internals._retrieveHandler;
  if (typeof lookup !== 'function') return;
  /** The headers of the RPC grpc-js is dispatching (the lookup runs inside its handler). */
  let dispatching: IncomingHttpHeaders | undefined;
  if (telemetry.tracer) {
    for (const name of ['_streamHandler', '_channelzHandler'] as const) {
      const handle = internals[name];
      if (typeof handle !== 'function') continue;
      internals[name] = function (interceptors, stream, headers) {
        dispatching = headers;
        try {
          handle.call(this, interceptors, stream, headers);
        } finally {
          dispatching = undefined;
        }
      };
    }
  }
  internals._retrieveHandler = function (path) {
    const handler = lookup.call(this, path);
    if (handler === null || handler === undefined) {
      recordUnimplemented(telemetry, path, dispatching);
    }
    return handler;
  };
}

/**
 * A66's record and A72's span of an RPC for `path` that grpc-js answered UNIMPLEMENTED: its
 * method is `other` unless the application's filter asks for the name (the span's name too, as
 * grpc-go names it; its status description, grpc-js's, names the method). The span continues
 * the caller's trace when `headers` (the request's) are known.
 */
function recordUnimplemented(
  telemetry: Telemetry,
  path: string,
  headers: IncomingHttpHeaders | undefined,
): void {
  const named = methodLabel(path);
  const method = telemetry.recordsMethod(named) ? named : OTHER_METHOD;
  // grpc-js's own words for this status.
  const details = `The server does not implement the method ${path}`;
  if (telemetry.meterProvider) {
    const instruments = serverCallInstruments(telemetry.meterProvider);
    // Not kept: an attacker choosing the name must not grow a cache (A66's `other`).
    const labels = new MethodLabels(SERVER_LABELS, method);
    new ServerCallMetrics(instruments, labels).end(status.UNIMPLEMENTED);
  }
  const { tracer, propagator } = telemetry;
  if (tracer && propagator) {
    const metadata = headers ? Metadata.fromHttp2Headers(headers) : new Metadata();
    new ServerCallSpan(tracer, propagator, method, metadata).end(status.UNIMPLEMENTED, details);
  }
}
