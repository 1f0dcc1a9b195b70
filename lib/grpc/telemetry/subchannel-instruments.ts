// gRFC A94's subchannel instruments, with its names, units and descriptions. One set per
// MeterProvider, on the same meter as A66's.
import type { Counter, MeterProvider, UpDownCounter, ValueType } from '@opentelemetry/api';
import { meterOf } from './instruments';

export interface SubchannelInstruments {
  readonly attemptsSucceeded: Counter;
  readonly attemptsFailed: Counter;
  readonly disconnections: Counter;
  readonly openConnections: UpDownCounter;
}

/** ValueType.INT, without loading @opentelemetry/api for its enum. */
const INT = 0 as ValueType;

const byProvider = new WeakMap<MeterProvider, SubchannelInstruments>();

export function subchannelInstruments(provider: MeterProvider): SubchannelInstruments {
  let made = byProvider.get(provider);
  if (made) return made;
  const meter = meterOf(provider);
  made = {
    attemptsSucceeded: meter.createCounter('grpc.subchannel.connection_attempts_succeeded', {
      description: 'Number of successful connection attempts.',
      unit: '{attempt}',
      valueType: INT,
    }),
    attemptsFailed: meter.createCounter('grpc.subchannel.connection_attempts_failed', {
      description: 'Number of failed connection attempts.',
      unit: '{attempt}',
      valueType: INT,
    }),
    disconnections: meter.createCounter('grpc.subchannel.disconnections', {
      description: 'Number of times the selected subchannel becomes disconnected.',
      unit: '{disconnection}',
      valueType: INT,
    }),
    openConnections: meter.createUpDownCounter('grpc.subchannel.open_connections', {
      description: 'Number of open connections.',
      unit: '{connection}',
      valueType: INT,
    }),
  };
  byProvider.set(provider, made);
  return made;
}
