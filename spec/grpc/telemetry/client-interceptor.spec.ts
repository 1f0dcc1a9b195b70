// The exported client interceptor gives channels that do not use xDS A66's instruments and
// A72's spans (one attempt per call), and records nothing on an `xds:` channel, which the
// plugin already records.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { propagation } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { clientTelemetryInterceptor, register } from '../../../lib/grpc';
import { edsCluster, endpoints } from '../../../lib/testing';
import {
  inMemoryMetrics,
  inMemoryTraces,
  pointLines,
  type InMemoryMetrics,
  type InMemoryTraces,
} from '../helpers/telemetry';
import {
  callClientStream,
  callUnary,
  startTelemetryBackend,
  type TelemetryBackend,
} from '../helpers/telemetry-backend';
import { startXdsEnv, TARGET } from '../helpers/xds-env';

const LABELS = ['grpc.method', 'grpc.target', 'grpc.status'];

describe('client telemetry interceptor for channels without xDS', () => {
  let backend: TelemetryBackend;
  let metrics: InMemoryMetrics;
  let traces: InMemoryTraces;
  const clients: grpc.Client[] = [];

  beforeEach(async () => {
    backend = await startTelemetryBackend();
    metrics = inMemoryMetrics();
    traces = inMemoryTraces();
  });
  afterEach(async () => {
    register({});
    for (const c of clients.splice(0)) c.close();
    await backend.close();
    await metrics.shutdown();
    await traces.shutdown();
  });

  function plainClient(): grpc.Client {
    const target = backend.address;
    const client = new grpc.Client(target, grpc.credentials.createInsecure(), {
      interceptors: [clientTelemetryInterceptor({ target })],
    });
    clients.push(client);
    return client;
  }

  it("records A66's instruments with the channel's canonical target and the messages' bytes", async () => {
    register({ meterProvider: metrics.provider });
    const client = plainClient();
    await callUnary(client, Buffer.alloc(100));
    await callClientStream(client, [Buffer.alloc(10), Buffer.alloc(20)]);
    backend.behaviour = { code: grpc.status.NOT_FOUND };
    await assert.rejects(callUnary(client, Buffer.alloc(1)));

    const target = `dns:///${backend.address}`;
    assert.deepEqual(
      pointLines((await metrics.read('grpc.client.attempt.started')).points, LABELS),
      [
        `test.Telemetry/Collect ${target} undefined → 1`,
        `test.Telemetry/Unary ${target} undefined → 2`,
      ],
    );
    const lines = [
      `test.Telemetry/Collect ${target} OK → 1`,
      `test.Telemetry/Unary ${target} NOT_FOUND → 1`,
      `test.Telemetry/Unary ${target} OK → 1`,
    ];
    for (const name of [
      'grpc.client.attempt.duration',
      'grpc.client.call.duration',
      'grpc.client.attempt.sent_total_compressed_message_size',
    ]) {
      assert.deepEqual(pointLines((await metrics.read(name)).points, LABELS), lines, name);
    }
    const sent = (await metrics.read('grpc.client.attempt.sent_total_compressed_message_size'))
      .points;
    const sums = sent.map((p) => `${String(p.labels['grpc.status'])} ${p.sum}`).sort();
    assert.deepEqual(sums, ['NOT_FOUND 1', 'OK 100', 'OK 30']);
  });

  it('makes a call span and an attempt span, and sends the attempt span as traceparent', async () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    register({ tracerProvider: traces.provider });
    await callUnary(plainClient(), Buffer.alloc(5));
    const [attempt, call] = traces.spans();
    assert.equal(call?.name, 'Sent.test.Telemetry.Unary');
    assert.equal(attempt?.name, 'Attempt.test.Telemetry.Unary');
    assert.equal(attempt.parentSpanContext?.spanId, call.spanContext().spanId);
    const { traceId, spanId } = attempt.spanContext();
    assert.deepEqual(backend.received.at(-1)!.get('traceparent'), [`00-${traceId}-${spanId}-01`]);
  });

  it('records nothing itself on an xds: channel, which the plugin records once', async () => {
    const env = await startXdsEnv();
    try {
      register({ meterProvider: metrics.provider });
      env.serve({
        clusters: [edsCluster('echo')],
        endpoints: [endpoints('echo', [{ addresses: [backend.address] }])],
      });
      const client = env.client({ interceptors: [clientTelemetryInterceptor({ target: TARGET })] });
      await callUnary(client, Buffer.alloc(1));
      const started = (await metrics.read('grpc.client.attempt.started')).points;
      assert.deepEqual(
        started.map((p) => p.value),
        [1],
      );
    } finally {
      await env.close();
    }
  });
});
