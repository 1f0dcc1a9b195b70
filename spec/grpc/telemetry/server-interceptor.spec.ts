// End to end (gRFC A66, A72): a plain grpc-js server (no xDS) given
// `serverTelemetryInterceptor()` first in its interceptors records the same server instruments
// and spans as an XdsServer, with its own providers or register()'s.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { register, serverTelemetryInterceptor } from '../../../lib/grpc';
import { inMemoryMetrics, inMemoryTraces, pointLines } from '../helpers/telemetry';
import {
  FAILING,
  SERVICE,
  serviceHandlers,
  stream,
  UNARY,
  unary,
} from '../helpers/telemetry-service';

describe('serverTelemetryInterceptor (gRFC A66, A72)', () => {
  const stops: (() => Promise<void> | void)[] = [];

  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
    register({});
  });

  /** A plain grpc-js server with `interceptors`, and a client to it. */
  async function start(interceptors: grpc.ServerInterceptor[]): Promise<grpc.Client> {
    const server = new grpc.Server({ interceptors });
    server.addService(SERVICE, serviceHandlers().handlers);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    stops.push(
      () => server.forceShutdown(),
      () => client.close(),
    );
    return client;
  }

  it("records A66's server instruments and A72's span with its own providers", async () => {
    const metrics = inMemoryMetrics();
    const traces = inMemoryTraces();
    stops.push(
      () => metrics.shutdown(),
      () => traces.shutdown(),
    );
    const client = await start([
      serverTelemetryInterceptor({
        meterProvider: metrics.provider,
        tracerProvider: traces.provider,
      }),
    ]);
    assert.equal(await unary(client, UNARY, 7), 'OK');
    assert.equal(await unary(client, FAILING, 1), 'NOT_FOUND');
    await stream(client, [Buffer.alloc(1)]);
    const keys = ['grpc.method', 'grpc.status'];
    assert.deepEqual(pointLines((await metrics.read('grpc.server.call.duration')).points, keys), [
      'test.Echo/Echo OK → 1',
      'test.Echo/Fail NOT_FOUND → 1',
      'test.Echo/Stream OK → 1',
    ]);
    const started = await metrics.read('grpc.server.call.started');
    assert.deepEqual(pointLines(started.points, ['grpc.method']), [
      'test.Echo/Echo → 1',
      'test.Echo/Fail → 1',
      'test.Echo/Stream → 1',
    ]);
    const sent = await metrics.read('grpc.server.call.sent_total_compressed_message_size');
    assert.deepEqual(
      sent.points.map((p) => `${String(p.labels['grpc.method'])} Σ ${p.sum}`).sort(),
      ['test.Echo/Echo Σ 14', 'test.Echo/Fail Σ 0', 'test.Echo/Stream Σ 3'],
    );
    assert.deepEqual(
      traces
        .spans()
        .map((s) => s.name)
        .sort(),
      ['Recv.test.Echo.Echo', 'Recv.test.Echo.Fail', 'Recv.test.Echo.Stream'],
    );
  });

  it("takes register()'s providers when given no options, and records refusals of later interceptors", async () => {
    const metrics = inMemoryMetrics();
    stops.push(() => metrics.shutdown());
    register({ meterProvider: metrics.provider });
    const refuseFail: grpc.ServerInterceptor = (method, call) =>
      new grpc.ServerInterceptingCall(call, {
        start: (next) =>
          next({
            onReceiveMetadata: (metadata, nextMetadata) => {
              if (method.path !== FAILING) nextMetadata(metadata);
              else call.sendStatus({ code: grpc.status.UNAUTHENTICATED, details: 'who?' });
            },
          }),
      });
    const client = await start([serverTelemetryInterceptor(), refuseFail]);
    assert.equal(await unary(client, FAILING, 1), 'UNAUTHENTICATED');
    const keys = ['grpc.method', 'grpc.status'];
    assert.deepEqual(pointLines((await metrics.read('grpc.server.call.duration')).points, keys), [
      'test.Echo/Fail UNAUTHENTICATED → 1',
    ]);
  });
});
