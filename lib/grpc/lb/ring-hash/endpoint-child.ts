// One endpoint of the ring: a grpc-js LeafLoadBalancer (pick_first over the endpoint's
// addresses), created up front and connected only when a pick (or the policy, A61) asks.

import { connectivityState, experimental, type ChannelOptions } from '@grpc/grpc-js';

type Endpoint = experimental.Endpoint;
type Picker = experimental.Picker;
type ChannelControlHelper = experimental.ChannelControlHelper;

/** One endpoint: its leaf balancer, as it last reported. */
export class EndpointChild {
  state: connectivityState = connectivityState.IDLE;
  picker: Picker;
  errorMessage: string | null = null;
  private started = false;
  private connectPending = false;
  private destroyed = false;
  private readonly leaf: experimental.LeafLoadBalancer;

  constructor(
    public endpoint: Endpoint,
    public weight: number,
    public hashKey: string,
    helper: ChannelControlHelper,
    options: ChannelOptions,
    resolutionNote: string,
    onChange: () => void,
  ) {
    const childHelper = experimental.createChildChannelControlHelper(helper, {
      updateState: (state, picker, errorMessage) => {
        if (this.destroyed) return;
        this.state = state;
        this.picker = picker;
        if (errorMessage) this.errorMessage = errorMessage;
        onChange();
      },
    });
    this.leaf = new experimental.LeafLoadBalancer(endpoint, childHelper, options, resolutionNote);
    this.picker = this.leaf.getPicker();
  }

  update(endpoint: Endpoint, options: ChannelOptions): void {
    this.endpoint = endpoint;
    // Reconnects with the new addresses only if it was connecting or connected.
    this.leaf.updateEndpoint(endpoint, options);
  }

  /**
   * Asks an IDLE endpoint to connect, on the next tick: never from inside a pick or a state
   * callback, where a connection found READY at once would report into the caller.
   */
  requestConnection(): void {
    if (this.connectPending || this.destroyed) return;
    this.connectPending = true;
    process.nextTick(() => {
      this.connectPending = false;
      if (this.destroyed || this.state !== connectivityState.IDLE) return;
      if (this.started) {
        this.leaf.exitIdle();
      } else {
        this.started = true;
        this.leaf.startConnecting();
      }
    });
  }

  destroy(): void {
    this.destroyed = true;
    this.leaf.destroy();
  }
}
