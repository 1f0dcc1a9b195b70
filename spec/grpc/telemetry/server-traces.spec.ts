// End to end (gRFC A72): with a TracerProvider, an XdsServer makes a `Recv.<service>.<method>`
// span per RPC that continues the caller's trace (W3C `traceparent` through OpenTelemetry's
// global propagator, or A72's `grpc-trace-bin`), with an event per message each way and the
// status sent, and runs the handler with that span active. The client is plain grpc-js,
// sending the trace context in its metadata itself.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { grpcTraceBinPropagator, register } from '../../../lib/grpc';
import { ManagementServer, rbacFilter } from '../../../lib/testing';
import { inMemoryTraces, type InMemoryTraces } from '../helpers/telemetry';
import {
  FAILING,
  startXdsServer,
  stream,
  UNARY,
  unary,
  UNKNOWN,
  type ServedXds,
} from '../helpers/telemetry-service';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`;

function withTraceparent(): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('traceparent', TRACEPARENT);
  return metadata;
}

describe('XdsServer spans (gRFC A72)', () => {
  let management: ManagementServer;
  let traces: InMemoryTraces;
  let xds: ServedXds;

  beforeEach(async () => {
    management = await ManagementServer.start();
    traces = inMemoryTraces();
  });

  afterEach(async () => {
    xds.close();
    await management.close();
    await traces.shutdown();
    trace.disable();
    register({});
  });

  async function start(propagator?: ReturnType<typeof grpcTraceBinPropagator>): Promise<void> {
    register({ tracerProvider: traces.provider, ...(propagator ? { propagator } : {}) });
    xds = await startXdsServer(management);
  }

  /** The ended spans named `name`. */
  const spansNamed = (name: string) => traces.spans().filter((s) => s.name === name);

  it("continues the caller's W3C trace, with message events and the handler's spans as children", async () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    // The handler's own span comes from the global provider, as an application's would.
    trace.setGlobalTracerProvider(traces.provider);
    await start();
    await xds.serve();
    assert.equal(await unary(xds.client, UNARY, 5, { metadata: withTraceparent() }), 'OK');
    const span = spansNamed('Recv.test.Echo.Echo').at(-1);
    assert.ok(span, 'the server span ended with the status');
    assert.equal(span.kind, SpanKind.SERVER);
    assert.equal(span.spanContext().traceId, TRACE_ID);
    assert.equal(span.parentSpanContext?.spanId, CALLER_SPAN_ID);
    assert.deepEqual(span.status, { code: SpanStatusCode.OK });
    assert.deepEqual(
      span.events.map((e) => [e.name, e.attributes]),
      [
        ['Inbound message', { 'sequence-number': 0, 'message-size': 5 }],
        ['Outbound message', { 'sequence-number': 0, 'message-size': 10 }],
      ],
    );
    const work = spansNamed('app work').at(-1);
    assert.equal(work?.parentSpanContext?.spanId, span.spanContext().spanId);
    assert.equal(work?.spanContext().traceId, TRACE_ID);
  });

  it('reads the caller’s span from grpc-trace-bin with that propagator', async () => {
    await start(grpcTraceBinPropagator());
    await xds.serve();
    const metadata = new grpc.Metadata();
    metadata.set('grpc-trace-bin', Buffer.from(`0000${TRACE_ID}01${CALLER_SPAN_ID}0201`, 'hex'));
    assert.equal(await unary(xds.client, UNARY, 1, { metadata }), 'OK');
    const span = spansNamed('Recv.test.Echo.Echo').at(-1);
    assert.equal(span?.spanContext().traceId, TRACE_ID);
    assert.equal(span?.parentSpanContext?.spanId, CALLER_SPAN_ID);
  });

  it('numbers the messages of a stream each way', async () => {
    await start();
    await xds.serve();
    await stream(xds.client, [Buffer.alloc(2), Buffer.alloc(3)]);
    const span = spansNamed('Recv.test.Echo.Stream').at(-1);
    assert.deepEqual(
      span?.events.map(
        (e) =>
          `${e.name} ${String(e.attributes?.['sequence-number'])} ${String(e.attributes?.['message-size'])}`,
      ),
      [
        'Inbound message 0 2',
        'Outbound message 0 6',
        'Inbound message 1 3',
        'Outbound message 1 9',
      ],
    );
  });

  it('gives a compressed request its compressed size', async () => {
    await start();
    await xds.serve();
    const gzip = new grpc.Client(`127.0.0.1:${xds.port}`, grpc.credentials.createInsecure(), {
      'grpc.default_compression_algorithm': 2,
    });
    try {
      assert.equal(await unary(gzip, UNARY, 10_000), 'OK');
    } finally {
      gzip.close();
    }
    const inbound = spansNamed('Recv.test.Echo.Echo').at(-1)?.events[0];
    assert.equal(inbound?.name, 'Inbound message');
    assert.equal(inbound?.attributes?.['message-size'], 10_000);
    const compressed = Number(inbound?.attributes?.['message-size-compressed']);
    assert.ok(compressed > 0 && compressed < 1000, `gzipped to ${compressed}`);
  });

  it('ends with ERROR and "<CODE>, <details>" for a failed RPC and an RPC RBAC denies', async () => {
    await start();
    await xds.serve({
      httpFilters: [
        rbacFilter('rbac', {
          action: 'DENY',
          policies: {
            'no-stream': {
              permissions: [{ url_path: { path: { exact: '/test.Echo/Held' } } }],
              principals: [{ any: true }],
            },
          },
        }),
      ],
    });
    assert.equal(await unary(xds.client, FAILING, 1), 'NOT_FOUND');
    assert.equal(await unary(xds.client, '/test.Echo/Held', 1), 'PERMISSION_DENIED');
    assert.deepEqual(spansNamed('Recv.test.Echo.Fail').at(-1)?.status, {
      code: SpanStatusCode.ERROR,
      message: 'NOT_FOUND, no such thing',
    });
    const denied = spansNamed('Recv.test.Echo.Held').at(-1)?.status;
    assert.equal(denied?.code, SpanStatusCode.ERROR);
    assert.match(String(denied?.message), /^PERMISSION_DENIED, RBAC: /);
  });

  it("gives a method with no handler a Recv.other span in the caller's trace, named only when methodAttributeFilter asks", async () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    register({
      tracerProvider: traces.provider,
      methodAttributeFilter: (m) => m === 'test.Echo/Named',
    });
    xds = await startXdsServer(management);
    await xds.serve();
    assert.equal(
      await unary(xds.client, UNKNOWN, 1, { metadata: withTraceparent() }),
      'UNIMPLEMENTED',
    );
    const span = spansNamed('Recv.other').at(-1);
    assert.ok(span, 'the unregistered method has a span');
    assert.equal(span.kind, SpanKind.SERVER);
    assert.equal(span.spanContext().traceId, TRACE_ID);
    assert.equal(span.parentSpanContext?.spanId, CALLER_SPAN_ID);
    assert.deepEqual(span.status, {
      code: SpanStatusCode.ERROR,
      message: 'UNIMPLEMENTED, The server does not implement the method /test.Echo/Unknown',
    });
    assert.equal(await unary(xds.client, '/test.Echo/Named', 1), 'UNIMPLEMENTED');
    assert.equal(spansNamed('Recv.test.Echo.Named').length, 1);
  });
});
