// One endpoint of the ring: a grpc-js LeafLoadBalancer (pick_first over the endpoint's
// addresses), created up front and connected only when a pick (or the policy, A61) asks.

import { connectivityState, experimental, type ChannelOptions } from '@grpc/grpc-js';
import { ForwardingHelper } from '../common/forwarding-helper';

type Endpoint = experimental.Endpoint;
type Picker = experimental.Picker;
type ChannelControlHelper = experimental.ChannelControlHelper;

/** One endpoint: its leaf balancer, as it last reported; the leaf's helper is the child itself. */
export class EndpointChild extends ForwardingHelper {
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
    private readonly onChange: () => void,
  ) {
    super(helper);
    this.leaf = new experimental.LeafLoadBalancer(endpoint, this, options, resolutionNote);
    this.picker = this.leaf.getPicker();
  }

  override updateState(state: connectivityState, picker: Picker, errorMessage: string | null) {
    if (this.destroyed) return;
    this.state = state;
    this.picker = picker;
    if (errorMessage) this.errorMessage = errorMessage;
    this.onChange();
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
