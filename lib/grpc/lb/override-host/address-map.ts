// gRFC A55's address map: for each endpoint address the override_host policy was given, its EDS
// health status, its endpoint's addresses (what a session cookie names) and the newest subchannel
// the child policy created for it, wrapped so that its connectivity state, its health (outlier
// detection's ejections) and the child's last unref are seen here. A DRAINING endpoint is taken
// from the child; when override_host_status includes DRAINING, the map holds a ref of its own on
// its subchannel so the connection stays open for the sessions it has, until the endpoint leaves
// EDS or its connection closes.

import { connectivityState, experimental } from '@grpc/grpc-js';
import type { OverrideHostStatus } from '../../../resources/cluster';
import type { EndpointHealthStatus } from '../../../resources/endpoint';
import { healthStatusOf } from './config';
import { SubchannelWrapper } from '../common/subchannel-wrapper';

type Endpoint = experimental.Endpoint;
type SubchannelInterface = experimental.SubchannelInterface;

export interface AddressEntry {
  health: EndpointHealthStatus;
  /** The endpoint's addresses, `host:port` joined by commas: what a cookie names. */
  addresses: string;
  subchannel: OverrideHostSubchannel | undefined;
  /** The map holds a ref on the subchannel (a DRAINING endpoint's connection kept open). */
  owned: boolean;
}

/** A subchannel of the child policy, watched by the map. */
export class OverrideHostSubchannel extends SubchannelWrapper {
  /** The child policy's refs. */
  private childRefs = 0;
  state: connectivityState;
  private readonly onState = (
    _subchannel: SubchannelInterface,
    _previous: connectivityState,
    next: connectivityState,
  ): void => {
    this.state = next;
    this.map.stateChanged(this);
  };
  /**
   * Ejected or back (grpc-js's outlier detection ejects through health, which the child need not
   * report: pick_first does not): queued session picks must be tried again.
   */
  private readonly onHealth = (): void => this.map.stateChanged(this);

  constructor(
    child: SubchannelInterface,
    /** Its address, `host:port`: the map's key. */
    readonly key: string,
    private readonly map: AddressMap,
  ) {
    super(child);
    this.state = child.getConnectivityState();
    child.addConnectivityStateListener(this.onState);
    // The base class passes the child's health changes on to this wrapper's watchers.
    this.addHealthStateWatcher(this.onHealth);
  }

  override ref(): void {
    super.ref();
    this.childRefs++;
  }

  override unref(): void {
    super.unref();
    this.childRefs--;
    if (this.childRefs === 0) this.map.childReleased(this);
  }

  get heldByChild(): boolean {
    return this.childRefs > 0;
  }

  /** The subchannel this wraps: what the picker hands up (cluster_impl reads its locality). */
  unwrap(): SubchannelInterface {
    return this.child;
  }

  /** Stops watching it: the map has forgotten it. */
  detach(): void {
    this.child.removeConnectivityStateListener(this.onState);
    this.removeHealthStateWatcher(this.onHealth);
  }
}

export class AddressMap {
  private readonly entries = new Map<string, AddressEntry>();
  /** The cluster's override_host_status (at most three: a list is as quick as a Set, and smaller). */
  private statuses: readonly string[] = [];

  /** `changed` is called when an overridable entry's subchannel changes state. */
  constructor(private readonly changed: () => void) {}

  get(key: string): AddressEntry | undefined {
    return this.entries.get(key);
  }

  /** A session may go to this entry's endpoint: its health is in override_host_status. */
  overridable(entry: AddressEntry): boolean {
    return this.statuses.includes(entry.health);
  }

  /**
   * Takes the endpoints of an update (A55's pseudo-code) and returns those for the child: all
   * but the DRAINING ones, whatever override_host_status says.
   */
  update(endpoints: readonly Endpoint[], statuses: readonly OverrideHostStatus[]): Endpoint[] {
    this.statuses = statuses;
    const seen = new Set<string>();
    const forChild: Endpoint[] = [];
    for (const endpoint of endpoints) {
      const health = healthStatusOf(endpoint);
      const keys = endpoint.addresses.map((a) => experimental.subchannelAddressToString(a));
      const addresses = keys.join(',');
      for (const key of keys) {
        seen.add(key);
        let entry = this.entries.get(key);
        if (!entry) {
          entry = { health, addresses, subchannel: undefined, owned: false };
          this.entries.set(key, entry);
        }
        entry.health = health;
        entry.addresses = addresses;
        this.keepIfDraining(entry);
      }
      if (health !== 'DRAINING') forChild.push(endpoint);
    }
    for (const [key, entry] of this.entries) {
      if (seen.has(key)) continue;
      this.entries.delete(key);
      this.forget(entry);
    }
    return forChild;
  }

  /** Wraps a subchannel the child created: the newest one for its address is the entry's. */
  adopt(subchannel: SubchannelInterface, key: string): OverrideHostSubchannel {
    const wrapper = new OverrideHostSubchannel(subchannel, key, this);
    const entry = this.entries.get(key);
    if (entry) {
      this.forget(entry);
      entry.subchannel = wrapper;
    }
    return wrapper;
  }

  stateChanged(wrapper: OverrideHostSubchannel): void {
    const entry = this.entries.get(wrapper.key);
    if (entry?.subchannel !== wrapper) return;
    // A kept DRAINING connection is kept only while it lasts: once closed, the map lets go.
    const closed =
      wrapper.state === connectivityState.IDLE ||
      wrapper.state === connectivityState.TRANSIENT_FAILURE;
    if (entry.owned && !wrapper.heldByChild && closed) this.forget(entry);
    if (this.overridable(entry)) this.changed();
  }

  /** The child let go of `wrapper`: forgotten, unless the map keeps its connection. */
  childReleased(wrapper: OverrideHostSubchannel): void {
    const entry = this.entries.get(wrapper.key);
    if (entry?.subchannel !== wrapper) {
      wrapper.detach();
    } else if (!entry.owned) {
      entry.subchannel = undefined;
      wrapper.detach();
    }
  }

  /** Lets go of every subchannel. */
  clear(): void {
    for (const entry of this.entries.values()) this.forget(entry);
    this.entries.clear();
  }

  /**
   * A55: a DRAINING endpoint's connection is kept when override_host_status includes DRAINING;
   * any other entry's is the child's to keep or close.
   */
  private keepIfDraining(entry: AddressEntry): void {
    const keep =
      entry.health === 'DRAINING' &&
      this.statuses.includes('DRAINING') &&
      entry.subchannel !== undefined;
    if (keep && !entry.owned) {
      entry.subchannel!.unwrap().ref();
      entry.owned = true;
    } else if (!keep && entry.owned) {
      this.disown(entry);
    }
  }

  /** Drops the map's own ref; the subchannel stays the entry's while the child holds it. */
  private disown(entry: AddressEntry): void {
    const subchannel = entry.subchannel;
    if (!entry.owned || !subchannel) return;
    entry.owned = false;
    // The child, if it wants this endpoint again, refs it within the same update: a
    // subchannel's last ref also keeps the channel's pool from closing it in between.
    subchannel.unwrap().unref();
    if (!subchannel.heldByChild) {
      entry.subchannel = undefined;
      subchannel.detach();
    }
  }

  /** The entry lets go of its subchannel (replaced, or the endpoint is gone). */
  private forget(entry: AddressEntry): void {
    const subchannel = entry.subchannel;
    if (!subchannel) return;
    if (entry.owned) {
      entry.owned = false;
      subchannel.unwrap().unref();
    }
    entry.subchannel = undefined;
    subchannel.detach();
  }
}
