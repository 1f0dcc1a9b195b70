// ChildHandler: grpc-js's ChildLoadBalancerHandler with one helper class for every instance
// (decision 0082). Each handler's child must still report to its own parent only, and a child
// policy of another name must still take over gracefully, as grpc-js's handler does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectivityState } from '@grpc/grpc-js';
// Internal on purpose: the handler is inside the LB tree; no public API reaches it alone.
import { ChildHandler } from '../../../lib/grpc/lb/common/child-handler';
import {
  FakeConfig,
  FakeHelper,
  RecordingConfig,
  fakeChild,
  registerTestPolicies,
  underFakeParent,
} from './test-policies';

const { CONNECTING, READY, TRANSIENT_FAILURE } = connectivityState;

registerTestPolicies();

describe('ChildHandler', () => {
  it('gives every handler one helper class, and each child reports to its own parent', () => {
    const a = underFakeParent((h) => new ChildHandler(h));
    const b = underFakeParent((h) => new ChildHandler(h));
    const helperClass = (handler: object) =>
      (handler as { ChildPolicyHelper?: unknown }).ChildPolicyHelper;
    assert.equal(typeof helperClass(a.lb), 'function');
    assert.equal(helperClass(a.lb), helperClass(b.lb));
    a.update(new FakeConfig('child-handler-a'));
    b.update(new FakeConfig('child-handler-b'));
    fakeChild('child-handler-a').report(READY);
    fakeChild('child-handler-b').report(TRANSIENT_FAILURE);
    assert.deepEqual(
      [a.helper, b.helper].map((h: FakeHelper) => h.reports.map((r) => r.state)),
      [[READY], [TRANSIENT_FAILURE]],
    );
  });

  it('keeps the old child until a child of another policy name leaves CONNECTING', () => {
    const { helper, update } = underFakeParent((h) => new ChildHandler(h));
    update(new FakeConfig('child-handler-old'));
    const old = fakeChild('child-handler-old');
    old.report(READY);
    // Another policy name: a pending child beside the current one.
    update(new RecordingConfig('child-handler-switch', new FakeConfig('child-handler-new')));
    const next = fakeChild('child-handler-new');
    next.report(CONNECTING);
    assert.equal(old.destroyed, false);
    assert.deepEqual(
      helper.reports.map((r) => r.state),
      [READY],
    );
    next.report(READY);
    assert.equal(old.destroyed, true);
    assert.deepEqual(
      helper.reports.map((r) => r.state),
      [READY, READY],
    );
  });
});
