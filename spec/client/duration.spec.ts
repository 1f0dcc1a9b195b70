// Milliseconds → google.protobuf.Duration, as LRS reports and grpc-js configs carry them: nanos
// always below one second, whatever the fraction.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { durationOfMs } from '../../lib/duration';

describe('durations', () => {
  it('whole and fractional milliseconds become seconds and nanos', () => {
    assert.deepEqual(durationOfMs(0), { seconds: 0, nanos: 0 });
    assert.deepEqual(durationOfMs(1500), { seconds: 1, nanos: 500_000_000 });
    assert.deepEqual(durationOfMs(0.25), { seconds: 0, nanos: 250_000 });
  });

  it('a fraction within half a nanosecond of a second rounds up to it', () => {
    // Rounded per part, this was { seconds: 0, nanos: 1e9 }: not a valid Duration.
    assert.deepEqual(durationOfMs(999.9999999), { seconds: 1, nanos: 0 });
    assert.deepEqual(durationOfMs(1999.99999996), { seconds: 2, nanos: 0 });
  });
});
