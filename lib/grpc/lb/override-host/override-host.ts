// `xds_client.override_host` (gRFC A55's xds_override_host): between cluster_impl and the
// cluster's priority policy. An RPC whose session cookie names an endpoint of this cluster goes
// to it while its EDS health status is in the cluster's override_host_status and its subchannel
// is healthy and READY (IDLE: connect and wait; CONNECTING: wait; ejected by outlier detection:
// skipped, decision 0071); otherwise the child picks. Every pick
// tells the RPC's session which endpoint it got, for the cookie (stateful-session/).

import { connectivityState, experimental, type ChannelOptions } from '@grpc/grpc-js';
import { PICK_OVERRIDE_HOST, POLICY } from '../../names';
import { sessionCallOf, type SessionCall } from '../../stateful-session/session-call';
import { AddressMap, OverrideHostSubchannel } from './address-map';
import { OverrideHostConfig } from './config';
import { ChildHandler } from '../common/child-handler';
import { ForwardingHelper } from '../common/forwarding-helper';

type Picker = experimental.Picker;
type PickResult = experimental.PickResult;
type SubchannelAddress = experimental.SubchannelAddress;

/** What override_host's child reports to and creates its subchannels through. */
class OverrideHostChildHelper extends ForwardingHelper {
  constructor(
    parent: experimental.ChannelControlHelper,
    private readonly policy: OverrideHostLoadBalancer,
  ) {
    super(parent);
  }

  override updateState(state: connectivityState, picker: Picker, message: string | null): void {
    this.policy.onChildState(state, picker, message);
  }

  override createSubchannel(
    address: SubchannelAddress,
    args: ChannelOptions,
  ): experimental.SubchannelInterface {
    return this.policy.createChildSubchannel(address, args);
  }
}

export class OverrideHostLoadBalancer implements experimental.LoadBalancer {
  private readonly child: experimental.ChildLoadBalancerHandler;
  private readonly map = new AddressMap(() => this.scheduleReport());
  private childState:
    { state: connectivityState; picker: Picker; message: string | null } | undefined;
  private updating = false;
  private reportScheduled = false;

  constructor(private readonly helper: experimental.ChannelControlHelper) {
    this.child = new ChildHandler(new OverrideHostChildHelper(helper, this));
  }

  /** The child's report (through OverrideHostChildHelper). */
  onChildState(state: connectivityState, picker: Picker, message: string | null): void {
    this.childState = { state, picker, message };
    if (!this.updating) this.report();
  }

  /** A subchannel for the child (through OverrideHostChildHelper), known by its address. */
  createChildSubchannel(
    address: SubchannelAddress,
    args: ChannelOptions,
  ): experimental.SubchannelInterface {
    return this.map.adopt(
      this.helper.createSubchannel(address, args),
      experimental.subchannelAddressToString(address),
    );
  }

  updateAddressList(
    endpoints: experimental.StatusOr<experimental.Endpoint[]>,
    config: experimental.TypedLoadBalancingConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean {
    if (!(config instanceof OverrideHostConfig)) return false;
    const forChild = endpoints.ok
      ? experimental.statusOrFromValue(this.map.update(endpoints.value, config.overrideHostStatus))
      : endpoints;
    this.updating = true;
    try {
      return this.child.updateAddressList(forChild, config.child, options, resolutionNote);
    } finally {
      this.updating = false;
      this.report();
    }
  }

  /**
   * A session's endpoint changed state or health: a new picker, so that grpc-js tries queued
   * picks again (it does only on a new picker).
   */
  private scheduleReport(): void {
    if (this.reportScheduled) return;
    this.reportScheduled = true;
    queueMicrotask(() => {
      this.reportScheduled = false;
      if (!this.updating) this.report();
    });
  }

  private report(): void {
    const last = this.childState;
    if (!last) return;
    this.helper.updateState(
      last.state,
      new OverrideHostPicker(last.picker, this.map),
      last.message,
    );
  }

  exitIdle(): void {
    this.child.exitIdle();
  }

  resetBackoff(): void {
    this.child.resetBackoff();
  }

  destroy(): void {
    this.child.destroy();
    this.map.clear();
  }

  getTypeName(): string {
    return POLICY.overrideHost;
  }
}

const QUEUE: PickResult = {
  pickResultType: experimental.PickResultType.QUEUE,
  subchannel: null,
  status: null,
  onCallStarted: null,
  onCallEnded: null,
};

/** A55's picker: the session's endpoint if usable, else the child's pick. */
class OverrideHostPicker implements Picker {
  constructor(
    private readonly child: Picker,
    private readonly map: AddressMap,
  ) {}

  pick(args: experimental.PickArgs): PickResult {
    const info = args.extraPickInfo;
    const cookie = info[PICK_OVERRIDE_HOST];
    const session = sessionCallOf(info);
    const sessionPick = cookie ? this.pickSession(cookie, session) : undefined;
    if (sessionPick) return sessionPick;
    const result = this.child.pick(args);
    const picked = result.subchannel;
    if (result.pickResultType !== experimental.PickResultType.COMPLETE) return result;
    if (!(picked instanceof OverrideHostSubchannel)) return result;
    const entry = this.map.get(picked.key);
    session?.picked(entry?.addresses ?? picked.key);
    return { ...result, subchannel: picked.unwrap() };
  }

  /**
   * The cookie's first healthy READY endpoint; else connect an IDLE one and queue; else queue while
   * one is CONNECTING; else undefined (the child picks).
   */
  private pickSession(cookie: string, session: SessionCall | undefined): PickResult | undefined {
    let idle: OverrideHostSubchannel | undefined;
    let connecting = false;
    for (const address of cookie.split(',')) {
      const entry = this.map.get(address);
      const subchannel = entry?.subchannel;
      if (!entry || !subchannel || !this.map.overridable(entry)) continue;
      // Ejected by outlier detection (grpc-js ejects through health): not usable (A55).
      if (!subchannel.isHealthy()) continue;
      switch (subchannel.state) {
        case connectivityState.READY:
          session?.picked(entry.addresses);
          return {
            pickResultType: experimental.PickResultType.COMPLETE,
            subchannel: subchannel.unwrap(),
            status: null,
            onCallStarted: null,
            onCallEnded: null,
          };
        case connectivityState.IDLE:
          idle ??= subchannel;
          break;
        case connectivityState.CONNECTING:
          connecting = true;
          break;
        default:
          break;
      }
    }
    if (idle) {
      // Not from inside a pick: connecting may report states back into the tree.
      const toConnect = idle;
      queueMicrotask(() => toConnect.startConnecting());
      return QUEUE;
    }
    return connecting ? QUEUE : undefined;
  }
}

export function registerOverrideHostPolicy(): void {
  experimental.registerLoadBalancerType(
    POLICY.overrideHost,
    OverrideHostLoadBalancer,
    OverrideHostConfig,
  );
}
