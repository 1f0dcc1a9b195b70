// grpc-js's ChildLoadBalancerHandler (a child policy, swapped gracefully when its name changes
// in an update), without a class of its own per instance. grpc-js's constructor defines its
// `ChildPolicyHelper` class anew for every handler: a prototype and eight functions, ~2 KiB
// that each of the seven handlers in an `xds:` channel's LB tree kept for the channel's life
// (bench/RESULTS.md, heap per channel). The class's methods only read `this.parent`, so every
// handler can make its helpers with the first handler's class, and the one its constructor
// just made is dropped (decision 0082).
import { experimental } from '@grpc/grpc-js';

/** The helper class of the first handler made, for every handler after it. */
let sharedHelperClass: unknown;

export class ChildHandler extends experimental.ChildLoadBalancerHandler {
  constructor(helper: experimental.ChannelControlHelper) {
    super(helper);
    const slot = this as unknown as { ChildPolicyHelper?: unknown };
    // A grpc-js without the per-instance class leaves nothing to share: the handler is its own.
    if (typeof slot.ChildPolicyHelper !== 'function') return;
    sharedHelperClass ??= slot.ChildPolicyHelper;
    slot.ChildPolicyHelper = sharedHelperClass;
  }
}
