// SubchannelWrapper: our base for subchannel wrappers in place of grpc-js's BaseSubchannelWrapper
// (less kept per wrapper). grpc-js calls its wrappers through SubchannelInterface, so a wrapper
// must have every method grpc-js's base has, those of a later grpc-js release included.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { experimental } from '@grpc/grpc-js';
// Internal on purpose: the wrappers are inside the LB tree; no public API reaches the base alone.
import {
  FORWARDED_FROM_BASE,
  SubchannelWrapper,
  forwardMissingMethods,
} from '../../../lib/grpc/lb/common/subchannel-wrapper';

class Probe extends SubchannelWrapper {}

const methodsOf = (prototype: object): string[] =>
  Object.getOwnPropertyNames(prototype).filter(
    (name) =>
      name !== 'constructor' &&
      typeof Object.getOwnPropertyDescriptor(prototype, name)?.value === 'function',
  );

describe('SubchannelWrapper', () => {
  it("implements every method of the installed grpc-js's base wrapper itself", () => {
    // None borrowed: a grpc-js that adds one still works (forwarded), and this says to look.
    assert.deepEqual(FORWARDED_FROM_BASE, []);
    const probe = new Probe({} as experimental.SubchannelInterface) as unknown as Record<
      string,
      unknown
    >;
    const missing = methodsOf(experimental.BaseSubchannelWrapper.prototype).filter(
      (name) => typeof probe[name] !== 'function',
    );
    assert.deepEqual(missing, []);
  });

  it('forwards to the wrapped subchannel a method of a later base wrapper it lacks', () => {
    class Later extends SubchannelWrapper {}
    const laterBase = {
      getAddress() {
        return 'the base would say this';
      },
      drainCalls() {
        return 'the base forwards this';
      },
    };
    assert.deepEqual(forwardMissingMethods(laterBase, Later), ['drainCalls']);
    const calls: unknown[][] = [];
    const child = {
      getAddress: () => '127.0.0.1:1',
      drainCalls: (...args: unknown[]) => {
        calls.push(args);
        return 'drained';
      },
    } as unknown as experimental.SubchannelInterface;
    const wrapper = new Later(child) as unknown as {
      getAddress(): string;
      drainCalls(...args: unknown[]): unknown;
    };
    assert.equal(wrapper.drainCalls(1, 'two'), 'drained');
    assert.deepEqual(calls, [[1, 'two']]);
    // What the class has stays its own.
    assert.equal(wrapper.getAddress(), '127.0.0.1:1');
    // The class it was given, not the shared base.
    assert.equal('drainCalls' in SubchannelWrapper.prototype, false);
  });
});
