// The server telemetry interceptor reads sizes and statuses from grpc-js's innermost call; on a
// call that lacks what it wraps (another grpc-js version), it still records what an interceptor
// sees: the handler's responses, measured by serializing them again, and the status it sends.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
// Internal on purpose: no public way makes grpc-js hand an interceptor a call of another shape.
import { telemetryInterceptorFor } from '../../../lib/grpc/telemetry/server-interceptor';
import { telemetryOf } from '../../../lib/grpc/telemetry/telemetry';
import { inMemoryMetrics } from '../helpers/telemetry';

const identity = (b: Buffer) => b;
const METHOD: grpc.ServerMethodDefinition<Buffer, Buffer> = {
  path: '/test.Echo/Echo',
  requestStream: false,
  responseStream: false,
  requestDeserialize: identity,
  responseSerialize: identity,
};

/** A call with only the interface's methods, as a wrapper from another library would be. */
function bareCall(sent: unknown[]): grpc.ServerInterceptingCallInterface {
  return {
    start: (listener) => listener.onReceiveMetadata(new grpc.Metadata()),
    sendMetadata: () => {},
    sendMessage: (message, callback) => {
      sent.push(message);
      callback();
    },
    sendStatus: (status) => sent.push(status.code),
    startRead: () => {},
    getPeer: () => '127.0.0.1:1',
    getDeadline: () => Infinity,
    getHost: () => 'localhost',
    getAuthContext: () => ({}),
    getConnectionInfo: () => ({ localIp: '', localPort: 0, remoteIp: '', remotePort: 0 }),
    getMetricsRecorder: () => undefined as never,
  } as grpc.ServerInterceptingCallInterface;
}

describe('server telemetry on a call of another shape', () => {
  it("records the handler's response bytes and status without grpc-js's innermost call", async () => {
    const metrics = inMemoryMetrics();
    const telemetry = telemetryOf({ meterProvider: metrics.provider });
    assert.ok(telemetry);
    const sent: unknown[] = [];
    const call = telemetryInterceptorFor(telemetry)(METHOD, bareCall(sent));
    call.start({
      onReceiveMetadata: () => {},
      onReceiveMessage: () => {},
      onReceiveHalfClose: () => {},
      onCancel: () => {},
    });
    call.sendMessage(Buffer.alloc(12), () => {});
    call.sendStatus({ code: grpc.status.OK, details: 'OK' });
    assert.deepEqual(sent, [Buffer.alloc(12), grpc.status.OK], 'everything passes through');
    const { points } = await metrics.read('grpc.server.call.sent_total_compressed_message_size');
    assert.deepEqual(
      points.map((p) => [p.labels['grpc.method'], p.labels['grpc.status'], p.sum]),
      [['test.Echo/Echo', 'OK', 12]],
    );
    await metrics.shutdown();
  });
});
