// A transparent retry on an `xds:` channel: a backend refuses the first stream (RST_STREAM
// REFUSED_STREAM, as an HTTP/2 server does before its application sees the request), grpc-js
// starts the stream again without counting an attempt, and A66 and A72 see two attempts of one
// call, the second marked as a transparent retry.
import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { register } from '../../../lib/grpc';
import { edsCluster, endpoints } from '../../../lib/testing';
import {
  inMemoryMetrics,
  inMemoryTraces,
  pointLines,
  type InMemoryMetrics,
  type InMemoryTraces,
} from '../helpers/telemetry';
import { callUnary, UNARY } from '../helpers/telemetry-backend';
import { startXdsEnv, TARGET, type XdsEnv } from '../helpers/xds-env';

const ATTEMPT = 'Attempt.test.Telemetry.Unary';
const SENT = 'Sent.test.Telemetry.Unary';

/**
 * An HTTP/2 server speaking just enough gRPC for `UNARY`: it refuses its first stream, then
 * answers each request with its own message. `streams` counts the streams it saw.
 */
interface RefusingBackend {
  readonly address: string;
  readonly streams: number;
  close(): Promise<void>;
}

async function startRefusingBackend(): Promise<RefusingBackend> {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  let streams = 0;
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    if (streams++ === 0) {
      stream.on('error', () => {}); // the refusal, as the server's side of the stream sees it
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      return;
    }
    assert.equal(headers[':path'], UNARY);
    const body: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => body.push(chunk));
    stream.on('end', () => {
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc' },
        { waitForTrailers: true },
      );
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      // The request's framed message is a well-framed answer.
      stream.end(Buffer.concat(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    get streams() {
      return streams;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('a transparent retry on an xds: channel (A66, A72)', () => {
  let env: XdsEnv;
  let backend: RefusingBackend;
  let metrics: InMemoryMetrics;
  let traces: InMemoryTraces;

  beforeEach(async () => {
    env = await startXdsEnv();
    backend = await startRefusingBackend();
    metrics = inMemoryMetrics();
    traces = inMemoryTraces();
  });
  afterEach(async () => {
    register({});
    await env.close();
    await backend.close();
    await metrics.shutdown();
    await traces.shutdown();
  });

  it('records a refused stream and its transparent retry as two attempts of one call', async () => {
    register({ meterProvider: metrics.provider, tracerProvider: traces.provider });
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [endpoints('echo', [{ addresses: [backend.address] }])],
    });
    const client = env.client();
    assert.deepEqual(await callUnary(client, Buffer.from('hi')), Buffer.from('hi'));
    assert.equal(backend.streams, 2, 'the first stream was refused, the second answered');

    const labels = ['grpc.method', 'grpc.target'];
    assert.deepEqual(
      pointLines((await metrics.read('grpc.client.attempt.started')).points, labels),
      [`test.Telemetry/Unary ${TARGET} → 2`],
    );
    const attempts = pointLines((await metrics.read('grpc.client.attempt.duration')).points, [
      'grpc.status',
    ]);
    assert.deepEqual(attempts, ['OK → 1', 'UNAVAILABLE → 1']);
    const calls = (await metrics.read('grpc.client.call.duration')).points;
    assert.deepEqual(pointLines(calls, ['grpc.status']), ['OK → 1']);

    const spans = traces.spans();
    assert.deepEqual(
      spans.map((s) => s.name),
      [ATTEMPT, ATTEMPT, SENT],
    );
    const [refused, retried] = spans as [ReadableSpan, ReadableSpan];
    assert.deepEqual(refused.attributes, {
      'previous-rpc-attempts': 0,
      'transparent-retry': false,
    });
    assert.deepEqual(retried.attributes, {
      'previous-rpc-attempts': 0,
      'transparent-retry': true,
    });
  });
});
