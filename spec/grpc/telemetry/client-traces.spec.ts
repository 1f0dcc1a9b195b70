// A72's client spans on `xds:` channels, read back through the OpenTelemetry SDK's in-memory
// exporter: a call span under the application's active span, an attempt span per attempt under
// it with its attributes and events, A72's status, and the attempt's context arriving at the
// backend in metadata (W3C traceparent through the global propagator, or grpc-trace-bin).
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { grpcTraceBinPropagator, register } from '../../../lib/grpc';
import { edsCluster, endpoints, type JsonObject } from '../../../lib/testing';
import { inMemoryTraces, type InMemoryTraces } from '../helpers/telemetry';
import {
  callUnary,
  startTelemetryBackend,
  type TelemetryBackend,
} from '../helpers/telemetry-backend';
import { everything, startXdsEnv, type XdsEnv } from '../helpers/xds-env';

const SENT = 'Sent.test.Telemetry.Unary';
const ATTEMPT = 'Attempt.test.Telemetry.Unary';
const OK = 1;
const ERROR = 2;

/** A span's events as `name {attributes}` lines. */
function events(span: ReadableSpan): string[] {
  return span.events.map((e) => `${e.name} ${JSON.stringify(e.attributes ?? {})}`);
}

describe('client spans on xds: channels (A72)', () => {
  let env: XdsEnv;
  let backend: TelemetryBackend;
  let traces: InMemoryTraces;

  beforeEach(async () => {
    env = await startXdsEnv();
    backend = await startTelemetryBackend();
    traces = inMemoryTraces();
  });
  afterEach(async () => {
    register({});
    await env.close();
    await backend.close();
    await traces.shutdown();
  });

  function serve(routeList?: readonly JsonObject[]): grpc.Client {
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [endpoints('echo', [{ addresses: [backend.address] }])],
      ...(routeList && { routes: routeList }),
    });
    return env.client();
  }

  /** Spans ended since `before` spans had, by name. */
  function newSpans(before: number): ReadableSpan[] {
    return traces.spans().slice(before);
  }

  it('makes a call span under the active span and an attempt span under it, sending its context as traceparent', async () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    register({ tracerProvider: traces.provider });
    const client = serve();
    await callUnary(client, Buffer.alloc(1)); // the channel resolves and connects
    const before = traces.spans().length;
    const parent = traces.provider.getTracer('spec').startSpan('application');
    await context.with(trace.setSpan(context.active(), parent), () =>
      callUnary(client, Buffer.alloc(100)),
    );
    parent.end();

    const [attempt, call] = newSpans(before);
    assert.equal(call?.name, SENT);
    assert.equal(attempt?.name, ATTEMPT);
    assert.equal(call.parentSpanContext?.spanId, parent.spanContext().spanId);
    assert.equal(call.spanContext().traceId, parent.spanContext().traceId);
    assert.equal(attempt.parentSpanContext?.spanId, call.spanContext().spanId);
    assert.deepEqual(attempt.attributes, {
      'previous-rpc-attempts': 0,
      'transparent-retry': false,
    });
    assert.deepEqual(events(attempt), [
      'Outbound message {"sequence-number":0,"message-size":100}',
      'Inbound message {"sequence-number":0,"message-size":100}',
    ]);
    assert.deepEqual(events(call), []);
    assert.deepEqual(attempt.status, { code: OK });
    assert.deepEqual(call.status, { code: OK });

    const { traceId, spanId } = attempt.spanContext();
    const sent = backend.received.at(-1)!.get('traceparent');
    assert.deepEqual(sent, [`00-${traceId}-${spanId}-01`]);
  });

  it('adds the name resolution and LB pick delays of a first RPC as events', async () => {
    register({ tracerProvider: traces.provider });
    await callUnary(serve(), Buffer.alloc(1));
    const [attempt, call] = traces.spans();
    assert.deepEqual(events(call!), ['Delayed name resolution complete {}']);
    assert.equal(events(attempt!)[0], 'Delayed LB pick complete {}');
  });

  it('makes one attempt span per attempt of a retried RPC, and ends each with its status', async () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    register({ tracerProvider: traces.provider });
    const retry = {
      retry_on: 'unavailable',
      num_retries: 2,
      retry_back_off: { base_interval: '0.01s' },
    };
    const client = serve([everything('echo', { retry_policy: retry })]);
    await callUnary(client, Buffer.alloc(1));
    const before = traces.spans().length;
    backend.behaviour = { code: grpc.status.UNAVAILABLE, details: 'not now', times: 1 };
    await callUnary(client, Buffer.alloc(1));

    const spans = newSpans(before);
    assert.deepEqual(
      spans.map((s) => s.name),
      [ATTEMPT, ATTEMPT, SENT],
    );
    const [first, second, call] = spans as [ReadableSpan, ReadableSpan, ReadableSpan];
    assert.deepEqual(first.attributes, { 'previous-rpc-attempts': 0, 'transparent-retry': false });
    assert.deepEqual(second.attributes, { 'previous-rpc-attempts': 1, 'transparent-retry': false });
    assert.deepEqual(first.status, { code: ERROR, message: 'UNAVAILABLE, not now' });
    assert.deepEqual(second.status, { code: OK });
    assert.deepEqual(call.status, { code: OK });
    for (const s of [first, second]) {
      assert.equal(s.parentSpanContext?.spanId, call.spanContext().spanId);
    }
    // Each attempt sent its own context.
    const sent = backend.received.slice(-2).map((m) => m.get('traceparent')[0]);
    assert.deepEqual(
      sent,
      [first, second].map((s) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`),
    );
  });

  it('marks the call span of a failed RPC ERROR with "<CODE>, <details>"', async () => {
    register({ tracerProvider: traces.provider });
    const client = serve();
    backend.behaviour = { code: grpc.status.PERMISSION_DENIED, details: 'no entry' };
    await assert.rejects(callUnary(client, Buffer.alloc(1)));
    const call = traces.spans().find((s) => s.name === SENT);
    assert.deepEqual(call?.status, { code: ERROR, message: 'PERMISSION_DENIED, no entry' });
  });

  it("sends the attempt's context as grpc-trace-bin with A72's propagator", async () => {
    register({ tracerProvider: traces.provider, propagator: grpcTraceBinPropagator() });
    await callUnary(serve(), Buffer.alloc(1));
    const attempt = traces.spans().find((s) => s.name === ATTEMPT)!;
    const [bytes] = backend.received.at(-1)!.get('grpc-trace-bin') as Buffer[];
    assert.ok(bytes, 'grpc-trace-bin sent');
    assert.equal(bytes.subarray(2, 18).toString('hex'), attempt.spanContext().traceId);
    assert.equal(bytes.subarray(19, 27).toString('hex'), attempt.spanContext().spanId);
    assert.deepEqual(backend.received.at(-1)!.get('traceparent'), []);
  });
});
