// LB policies and a channel helper for the LB specs, registered in grpc-js under test names:
// - `xds_client_test.fake`: a leaf the spec drives by hand (state, picker, re-resolution), to
//   check a parent policy's algorithm without sockets;
// - `xds_client_test.recording`: wraps a real child policy and logs when it is created and
//   destroyed, to see a parent's child lifetimes in end-to-end specs;
// and the two harnesses every parent policy's spec uses: `underFakeParent` (the policy on a
// FakeHelper, driven by hand) and `channelHarness` (real backends behind a manual resolver).
import assert from 'node:assert/strict';
import { after, afterEach, before } from 'node:test';
import {
  connectivityState,
  experimental,
  Metadata,
  status,
  type ChannelOptions,
} from '@grpc/grpc-js';
import {
  closeAll,
  manualResolver,
  newClient,
  startBackends,
  type Backend,
  type ManualResolver,
} from '../helpers/backends';

type Endpoint = experimental.Endpoint;
type Picker = experimental.Picker;
type PickResult = experimental.PickResult;
type TypedLoadBalancingConfig = experimental.TypedLoadBalancingConfig;

export const FAKE = 'xds_client_test.fake';
export const RECORDING = 'xds_client_test.recording';

// ---- fake ----

export class FakeConfig implements TypedLoadBalancingConfig {
  constructor(readonly id: string) {}
  getLoadBalancerName(): string {
    return FAKE;
  }
  toJsonObject(): object {
    return { [FAKE]: { id: this.id } };
  }
  static createFromJson(obj: { id?: unknown }): FakeConfig {
    if (typeof obj?.id !== 'string') throw new Error('fake: id must be a string');
    return new FakeConfig(obj.id);
  }
}

/** Every fake balancer created, by config id (a spec uses ids of its own). */
const fakes = new Map<string, FakeBalancer>();

export class FakeBalancer implements experimental.LoadBalancer {
  id = '';
  readonly updates: { endpoints: experimental.StatusOr<Endpoint[]>; options: ChannelOptions }[] =
    [];
  exitIdleCalls = 0;
  resetBackoffCalls = 0;
  destroyed = false;
  /** What this balancer's READY picker returns, for identity checks. */
  readonly pickResult: PickResult = {
    pickResultType: experimental.PickResultType.COMPLETE,
    subchannel: null,
    status: null,
    onCallStarted: () => {},
    onCallEnded: () => {},
  };
  /** The picker of the last report(). */
  lastPicker: Picker | null = null;
  /** Run inside updateAddressList, so a spec can make the fake report synchronously. */
  onUpdate: ((self: FakeBalancer) => void) | null = null;

  constructor(private readonly helper: experimental.ChannelControlHelper) {}

  updateAddressList(
    endpoints: experimental.StatusOr<Endpoint[]>,
    config: TypedLoadBalancingConfig,
    options: ChannelOptions,
  ): boolean {
    const id = (config as FakeConfig).id;
    if (this.id !== id) {
      this.id = id;
      this.onUpdate = pendingOnUpdate.get(id) ?? null;
      fakes.set(id, this);
    }
    this.updates.push({ endpoints, options });
    this.onUpdate?.(this);
    return true;
  }

  /** Reports `state`: READY with a picker returning pickResult, TF with `details`. */
  report(state: connectivityState, details = `${this.id} failed`): void {
    let picker: Picker;
    if (state === connectivityState.READY) picker = { pick: () => this.pickResult };
    else if (state === connectivityState.TRANSIENT_FAILURE) {
      picker = new experimental.UnavailablePicker({ code: status.UNAVAILABLE, details });
    } else picker = new experimental.QueuePicker(this);
    const message = state === connectivityState.TRANSIENT_FAILURE ? details : null;
    this.lastPicker = picker;
    this.helper.updateState(state, picker, message);
  }

  requestReresolution(): void {
    this.helper.requestReresolution();
  }

  /** Asks its parent for a subchannel, as a leaf policy does for each address. */
  createSubchannel(address: experimental.SubchannelAddress): experimental.SubchannelInterface {
    return this.helper.createSubchannel(address, {});
  }

  exitIdle(): void {
    this.exitIdleCalls++;
  }
  resetBackoff(): void {
    this.resetBackoffCalls++;
  }
  destroy(): void {
    this.destroyed = true;
  }
  getTypeName(): string {
    return FAKE;
  }
}

const pendingOnUpdate = new Map<string, (self: FakeBalancer) => void>();

/** The fake balancer created for config id `id`, if any. */
export function fake(id: string): FakeBalancer | undefined {
  return fakes.get(id);
}

/** Makes the fake for `id` run `hook` on each of its updates, from its very first one. */
export function onFakeUpdate(id: string, hook: (self: FakeBalancer) => void): void {
  pendingOnUpdate.set(id, hook);
  const existing = fakes.get(id);
  if (existing) existing.onUpdate = hook;
}

// ---- recording ----

export class RecordingConfig implements TypedLoadBalancingConfig {
  constructor(
    readonly name: string,
    readonly child: TypedLoadBalancingConfig,
  ) {}
  getLoadBalancerName(): string {
    return RECORDING;
  }
  toJsonObject(): object {
    return { [RECORDING]: { name: this.name, child_policy: [this.child.toJsonObject()] } };
  }
  static createFromJson(obj: { name?: unknown; child_policy?: unknown }): RecordingConfig {
    const child = experimental.selectLbConfigFromList(obj.child_policy as never);
    if (typeof obj.name !== 'string' || !child) throw new Error('recording: bad config');
    return new RecordingConfig(obj.name, child);
  }
}

/** Lifecycle events of recording balancers, in order: `created p1`, `destroyed p1`, … */
export const lifecycle: string[] = [];

class RecordingBalancer implements experimental.LoadBalancer {
  private readonly child: experimental.ChildLoadBalancerHandler;
  private name: string | null = null;
  constructor(helper: experimental.ChannelControlHelper) {
    this.child = new experimental.ChildLoadBalancerHandler(helper);
  }
  updateAddressList(
    endpoints: experimental.StatusOr<Endpoint[]>,
    config: TypedLoadBalancingConfig,
    options: ChannelOptions,
    note: string,
  ): boolean {
    const recording = config as RecordingConfig;
    if (this.name === null) lifecycle.push(`created ${(this.name = recording.name)}`);
    return this.child.updateAddressList(endpoints, recording.child, options, note);
  }
  exitIdle(): void {
    this.child.exitIdle();
  }
  resetBackoff(): void {
    this.child.resetBackoff();
  }
  destroy(): void {
    lifecycle.push(`destroyed ${this.name}`);
    this.child.destroy();
  }
  getTypeName(): string {
    return RECORDING;
  }
}

export function registerTestPolicies(): void {
  experimental.registerLoadBalancerType(FAKE, FakeBalancer, FakeConfig);
  experimental.registerLoadBalancerType(RECORDING, RecordingBalancer, RecordingConfig);
}

/** A recording wrapper around `child` (a JSON LB config) as JSON. */
export function recording(name: string, child: object): object {
  return { [RECORDING]: { name, child_policy: [child] } };
}

// ---- a parent's view ----

export interface Report {
  state: connectivityState;
  picker: Picker;
  message: string | null;
}

/** A ChannelControlHelper that records what a policy under test tells its channel. */
export class FakeHelper implements experimental.ChannelControlHelper {
  readonly reports: Report[] = [];
  reresolutionRequests = 0;
  createSubchannel(
    _address: experimental.SubchannelAddress,
    _options: ChannelOptions,
  ): experimental.SubchannelInterface {
    throw new Error('the fake helper has no subchannels');
  }
  updateState(state: connectivityState, picker: Picker, message: string | null): void {
    this.reports.push({ state, picker, message });
  }
  requestReresolution(): void {
    this.reresolutionRequests++;
  }
  addChannelzChild(): void {}
  removeChannelzChild(): void {}
  get last(): Report | undefined {
    return this.reports[this.reports.length - 1];
  }
}

/** A pick with empty arguments. */
export function pick(picker: Picker): PickResult {
  return picker.pick({ metadata: new Metadata(), extraPickInfo: {} });
}

/**
 * A parent policy under test on a FakeHelper, as its channel would hold it: `update` hands it a
 * config (with channel options, endpoints and a resolution note), `helper` records what it
 * reported. Its children are fakes when its config names FakeConfigs.
 */
export function underFakeParent<P extends experimental.LoadBalancer>(
  make: (helper: FakeHelper) => P,
) {
  const helper = new FakeHelper();
  const lb = make(helper);
  const update = (
    config: TypedLoadBalancingConfig,
    options: ChannelOptions = {},
    endpoints: Endpoint[] = [],
    note = '',
  ) => lb.updateAddressList(experimental.statusOrFromValue(endpoints), config, options, note);
  return { helper, lb, update };
}

/** The fake child (or target) `id`, which must exist. */
export function fakeChild(id: string, what = 'child'): FakeBalancer {
  const found = fake(id);
  assert.ok(found, `${what} ${id} exists`);
  return found;
}

// ---- end to end ----

/**
 * Real backends named `names` behind a manual resolver of `scheme`, for a policy's end-to-end
 * specs (call it inside a describe). After each test, the clients `client()` made are closed and
 * every backend answers and listens again; after the suite everything is closed.
 */
export function channelHarness(scheme: string, names: readonly string[]) {
  const resolver: ManualResolver = manualResolver(scheme);
  const backends: Backend[] = [];
  const clients: { close(): void }[] = [];
  before(async () => {
    backends.push(...(await startBackends(names)));
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    for (const backend of backends) {
      backend.behaviour = 'answer';
      await backend.start();
    }
  });
  after(() => closeAll());
  return {
    resolver,
    /** The backends, in the order of `names` (started before the suite's own `before`). */
    backends,
    /** A client of `resolver`'s target `name`, closed after the test. */
    client(name: string, options: Record<string, number> = {}) {
      const created = newClient(resolver.target(name), options);
      clients.push(created);
      return created;
    },
  };
}
