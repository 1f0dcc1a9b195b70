// register()'s telemetry options are checked where they are written, and A72's grpc-trace-bin
// propagator writes and reads OpenCensus's binary span context, as gRPC's other languages do.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Metadata } from '@grpc/grpc-js';
import {
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { grpcTraceBinPropagator, register } from '../../../lib/grpc';

const setter: TextMapSetter<Metadata> = {
  set: (carrier, key, value) => carrier.set(key, Buffer.from(value, 'base64')),
};
const getter: TextMapGetter<Metadata> = {
  keys: (carrier) => Object.keys(carrier.getMap()),
  get: (carrier, key) => (carrier.get(key)[0] as Buffer | undefined)?.toString('base64'),
};

describe('telemetry options', () => {
  it('names the wrong field of register options', () => {
    assert.throws(
      () => register({ meterProvider: {} as never }),
      /register\(options\): meterProvider must be an OpenTelemetry MeterProvider/,
    );
    assert.throws(
      () => register({ tracerProvider: 42 as never }),
      /register\(options\): tracerProvider must be an OpenTelemetry TracerProvider/,
    );
    assert.throws(
      () => register({ optionalLabels: ['grpc.lb.locality', 'grpc.lb.cluster' as never] }),
      /optionalLabels\[1\] must be one of grpc\.lb\.backend_service, grpc\.lb\.locality \(got "grpc\.lb\.cluster"\)/,
    );
    assert.throws(
      () => register({ propagator: { inject() {} } as never }),
      /propagator must be an OpenTelemetry TextMapPropagator/,
    );
  });

  it('sends a span context as grpc-trace-bin in OpenCensus binary format and reads it back', () => {
    const propagator = grpcTraceBinPropagator();
    assert.deepEqual(propagator.fields(), ['grpc-trace-bin']);
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const spanId = 'b7ad6b7169203331';
    const sent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId,
      spanId,
      traceFlags: TraceFlags.SAMPLED,
    });
    const metadata = new Metadata();
    propagator.inject(sent, metadata, setter);
    const bytes = metadata.get('grpc-trace-bin')[0] as Buffer;
    assert.equal(
      bytes.toString('hex'),
      `0000${traceId}01${spanId}0201`,
      'version 0, field 0 trace id, field 1 span id, field 2 options (sampled)',
    );
    const received = trace.getSpanContext(propagator.extract(ROOT_CONTEXT, metadata, getter));
    assert.deepEqual(received, { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
  });

  it('ignores a grpc-trace-bin value that is not a version 0 span context', () => {
    const propagator = grpcTraceBinPropagator();
    for (const hex of [
      '01' + '00'.repeat(28),
      '0000' + '00'.repeat(16) + '01' + '00'.repeat(8),
      'ff',
    ]) {
      const metadata = new Metadata();
      metadata.set('grpc-trace-bin', Buffer.from(hex, 'hex'));
      const context = propagator.extract(ROOT_CONTEXT, metadata, getter);
      assert.equal(trace.getSpanContext(context), undefined, hex);
    }
  });
});
