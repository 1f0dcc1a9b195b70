// The reconnect backoff: 1 s, ×1.6, ±20 % jitter, 120 s cap; reset after a healthy stream.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backoff } from '../../lib/client/transport/backoff';

describe('Backoff', () => {
  it('grows by 1.6 from 1 s to a 120 s cap without jitter', () => {
    const b = new Backoff({ jitter: 0 });
    const delays = Array.from({ length: 13 }, () => Math.round(b.next()));
    assert.deepEqual(delays.slice(0, 4), [1000, 1600, 2560, 4096]);
    assert.equal(delays.at(-1), 120_000);
    assert.ok(delays.every((d, i) => i === 0 || d >= delays[i - 1]!));
  });

  it('jitters each delay within plus or minus 20 percent', () => {
    const low = new Backoff({ random: () => 0 });
    const high = new Backoff({ random: () => 0.999999 });
    assert.equal(Math.round(low.next()), 800);
    assert.equal(Math.round(high.next()), 1200);
    assert.equal(Math.round(low.next()), 1280); // 1600 - 20 %
  });

  it('reset returns to the initial delay', () => {
    const b = new Backoff({ jitter: 0 });
    b.next();
    b.next();
    b.next();
    b.reset();
    assert.equal(b.next(), 1000);
  });
});
