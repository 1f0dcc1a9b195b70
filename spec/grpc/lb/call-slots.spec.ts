// Counting a call from its pick (lib/grpc/lb/common/call-slots.ts, used by least_request): the count
// goes up at the pick, down when the call ends, and comes back by itself when grpc-js abandons
// the pick without starting the call.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { experimental, Metadata, status } from '@grpc/grpc-js';
import { countPickedCall, InFlight } from '../../../lib/grpc/lb/common/call-slots';

type PickResult = experimental.PickResult;

function completePick(log: string[] = []): PickResult {
  return {
    pickResultType: experimental.PickResultType.COMPLETE,
    subchannel: null,
    status: null,
    onCallStarted: () => log.push('started'),
    onCallEnded: (code) => log.push(`ended ${status[code]}`),
  };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('counting picked calls', () => {
  it('counts at the pick and uncounts when the call ends, running the pick’s own hooks', () => {
    const counter = new InFlight();
    const log: string[] = [];
    const pick = countPickedCall(completePick(log), counter);
    assert.equal(counter.active, 1);
    pick.onCallStarted!();
    assert.equal(counter.active, 1);
    pick.onCallEnded!(status.OK, '', new Metadata());
    assert.equal(counter.active, 0);
    assert.deepStrictEqual(log, ['started', 'ended OK']);
  });

  it('gives the count back at the end of the tick when the call never starts', async () => {
    const counter = new InFlight();
    countPickedCall(completePick(), counter);
    countPickedCall(completePick(), counter);
    assert.equal(counter.active, 2);
    await nextTurn();
    assert.equal(counter.active, 0);
  });

  it('counts again a call that starts after the sweep (slow call credentials)', async () => {
    const counter = new InFlight();
    const pick = countPickedCall(completePick(), counter);
    await nextTurn();
    assert.equal(counter.active, 0);
    pick.onCallStarted!();
    assert.equal(counter.active, 1);
    pick.onCallEnded!(status.CANCELLED, '', new Metadata());
    assert.equal(counter.active, 0);
  });

  it('never uncounts twice', async () => {
    const counter = new InFlight();
    const pick = countPickedCall(completePick(), counter);
    pick.onCallStarted!();
    pick.onCallStarted!();
    await nextTurn();
    pick.onCallEnded!(status.OK, '', new Metadata());
    pick.onCallEnded!(status.OK, '', new Metadata());
    assert.equal(counter.active, 0);
  });
});
