import { experimental, type ChannelOptions } from '@grpc/grpc-js';
import { ChildHandler } from './child-handler';

/**
 * A policy with one child (cds, outlier detection's child): what it does not
 * decide itself — leaving idle, backoff, teardown — goes straight to that child.
 */
export abstract class SingleChildLoadBalancer implements experimental.LoadBalancer {
  protected readonly child: experimental.ChildLoadBalancerHandler;

  constructor(childHelper: experimental.ChannelControlHelper) {
    this.child = new ChildHandler(childHelper);
  }

  abstract updateAddressList(
    endpoints: experimental.StatusOr<experimental.Endpoint[]>,
    config: experimental.TypedLoadBalancingConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean;

  abstract getTypeName(): string;

  exitIdle(): void {
    this.child.exitIdle();
  }

  resetBackoff(): void {
    this.child.resetBackoff();
  }

  destroy(): void {
    this.child.destroy();
  }
}
