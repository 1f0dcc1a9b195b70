// The `xds_client.priority` LB policy (gRFC A56): a list of children in priority order, RPCs
// going to the first one that works. It is how a cluster fails over between EDS priorities, and
// how an aggregate cluster fails over between its leaf clusters (A37, A75).
//
// Where this differs from a plain reading of A56, it is on purpose:
// - every timer is unref'd and cleared on destroy, so a closed channel never keeps the process
//   alive nor fires into a destroyed tree;
// - a deactivated child that outlives its retention is destroyed, not only forgotten;
// - a child dropped from the config is destroyed at once (gRFC A115, as grpc-go and grpc-java
//   do; decision 0031): only lower priorities deactivated by a higher one that works are
//   retained. GRPC_EXPERIMENTAL_ENABLE_PRIORITY_LB_CHILD_POLICY_CACHE=true brings back A56's
//   retention of dropped children.

import {
  connectivityState,
  experimental,
  status,
  type ChannelOptions,
  type LoadBalancingConfig,
} from '@grpc/grpc-js';
import { tracer } from '../../../trace';
import { priorityRetainsDroppedChildren } from '../../environment';
import { POLICY } from '../../names';
import {
  isJsonObject,
  msOption,
  selectChildConfig,
  type ChildEvents,
} from '../common/child-balancer';
import { SmallMap } from '../../../small-map';
import { groupByFirstPathElement } from '../common/hierarchy';
import { PriorityChild } from './priority-child';

type Endpoint = experimental.Endpoint;
type StatusOr<T> = experimental.StatusOr<T>;
type TypedLoadBalancingConfig = experimental.TypedLoadBalancingConfig;

/**
 * Channel option: the failover timeout in milliseconds (default 10 s, A56), how long a priority
 * may stay CONNECTING before the next one is tried. The prefix keeps it out of subchannel keys.
 * For tests; production follows A56.
 */
export const PRIORITY_FAILOVER_TIMEOUT_OPTION =
  'grpc.internal.no_subchannel.xds_client.priority_failover_timeout_ms';
/**
 * Channel option: how long a deactivated child is kept before it is destroyed, in milliseconds
 * (default 15 min, A56). For tests.
 */
export const PRIORITY_RETENTION_OPTION =
  'grpc.internal.no_subchannel.xds_client.priority_retention_ms';

export const DEFAULT_FAILOVER_TIMEOUT_MS = 10_000;
export const DEFAULT_PRIORITY_RETENTION_MS = 15 * 60_000;

export const EMPTY_PRIORITY_LIST_MESSAGE = 'priority policy has an empty priority list';

const trace = tracer('xds_client_priority');

export interface PriorityChildConfig {
  readonly name: string;
  readonly config: TypedLoadBalancingConfig;
  readonly ignoreReresolutionRequests: boolean;
}

export class PriorityConfig implements TypedLoadBalancingConfig {
  /** In priority order, the highest first. */
  readonly children: readonly PriorityChildConfig[];

  constructor(children: readonly PriorityChildConfig[]) {
    const seen = new Set<string>();
    for (const child of children) {
      if (seen.has(child.name)) throw new Error(`child "${child.name}" listed twice`);
      seen.add(child.name);
    }
    // Copies, not frozen: V8 gives each frozen copy a hidden class of its own.
    this.children = children.map(({ name, config, ignoreReresolutionRequests }) => ({
      name,
      config,
      ignoreReresolutionRequests,
    }));
  }

  getLoadBalancerName(): string {
    return POLICY.priority;
  }

  toJsonObject(): object {
    const children: Record<string, object> = {};
    for (const child of this.children) {
      children[child.name] = {
        config: [child.config.toJsonObject()],
        ignore_reresolution_requests: child.ignoreReresolutionRequests,
      };
    }
    return { [POLICY.priority]: { children, priorities: this.children.map((c) => c.name) } };
  }

  /**
   * The JSON form `{ children: { [name]: { config: LoadBalancingConfig[],
   * ignore_reresolution_requests?: boolean } }, priorities: string[] }`. Children that no
   * priority names are ignored, as in the proto. Throws on anything else.
   */
  static createFromJson(obj: unknown): PriorityConfig {
    if (!isJsonObject(obj)) throw new Error('config must be an object');
    const { children, priorities } = obj;
    if (!isJsonObject(children)) throw new Error('children must be an object');
    if (!Array.isArray(priorities)) throw new Error('priorities must be an array');
    const parsed = priorities.map((name: unknown, i): PriorityChildConfig => {
      if (typeof name !== 'string') throw new Error(`priorities[${i}] not a string`);
      const child = Object.hasOwn(children, name) ? children[name] : undefined;
      if (!isJsonObject(child)) {
        throw new Error(`priorities[${i}] "${name}" has no entry in children`);
      }
      const ignore = child.ignore_reresolution_requests ?? false;
      if (typeof ignore !== 'boolean') {
        throw new Error(`children["${name}"].ignore_reresolution_requests not a boolean`);
      }
      return {
        name,
        config: selectChildConfig(
          child.config as LoadBalancingConfig[],
          `children["${name}"].config`,
        ),
        ignoreReresolutionRequests: ignore,
      };
    });
    return new PriorityConfig(parsed);
  }
}

export class PriorityLoadBalancer implements experimental.LoadBalancer, ChildEvents<PriorityChild> {
  /** A SmallMap: most clusters have one priority. */
  private readonly children = new SmallMap<string, PriorityChild>();
  private config: PriorityConfig | null = null;
  /** The resolver's error, when the last update had one instead of endpoints. */
  private endpointsError: StatusOr<Endpoint[]> | null = null;
  private groups = new SmallMap<string, Endpoint[]>();
  private options: ChannelOptions = {};
  private resolutionNote = '';
  /** A56's failover timeout, from the channel options (each child's timer reads it). */
  failoverTimeoutMs = DEFAULT_FAILOVER_TIMEOUT_MS;
  private retentionMs = DEFAULT_PRIORITY_RETENTION_MS;
  private current: PriorityChild | null = null;
  /** Set while a parent update is applied: children's reports are recorded, not acted on. */
  private updatesPaused = false;
  private choosing = false;
  private chooseAgain = false;
  private lastReported: {
    state: connectivityState;
    picker: experimental.Picker;
    message: string | null;
  } | null = null;
  private emptyListPicker: experimental.Picker | null = null;
  private destroyed = false;

  constructor(private readonly helper: experimental.ChannelControlHelper) {}

  // What the children report (ChildEvents): methods, not an object of closures per policy.

  onChildChange(): void {
    if (!this.updatesPaused && !this.destroyed) this.chooseAndReport(false);
  }

  onChildReresolution(child: PriorityChild): void {
    if (!child.ignoreReresolutionRequests) this.helper.requestReresolution();
  }

  onChildExpired(child: PriorityChild): void {
    if (this.children.get(child.name) === child) this.children.delete(child.name);
    if (this.current === child) {
      this.current = null;
      this.chooseAndReport(false);
    }
  }

  updateAddressList(
    endpoints: StatusOr<Endpoint[]>,
    lbConfig: TypedLoadBalancingConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean {
    if (!(lbConfig instanceof PriorityConfig) || this.destroyed) return false;
    this.config = lbConfig;
    this.endpointsError = endpoints.ok ? null : endpoints;
    this.groups = endpoints.ok ? groupByFirstPathElement(endpoints.value) : new SmallMap();
    this.options = options;
    this.resolutionNote = resolutionNote;
    this.failoverTimeoutMs = msOption(
      options,
      PRIORITY_FAILOVER_TIMEOUT_OPTION,
      DEFAULT_FAILOVER_TIMEOUT_MS,
    );
    this.retentionMs = msOption(options, PRIORITY_RETENTION_OPTION, DEFAULT_PRIORITY_RETENTION_MS);
    const byName = new Map(lbConfig.children.map((c) => [c.name, c]));
    const retainDropped = priorityRetainsDroppedChildren();
    // A56 "Configuration Updates": no choice on a half-updated set of children.
    this.updatesPaused = true;
    try {
      for (const child of [...this.children.values()]) {
        const entry = byName.get(child.name);
        if (entry) this.updateChild(child, entry);
        else if (retainDropped) child.deactivate(this.retentionMs);
        else this.dropChild(child);
      }
    } finally {
      this.updatesPaused = false;
    }
    // One choice and one report, before returning: the channel has the new picker at once.
    this.chooseAndReport(true);
    return true;
  }

  exitIdle(): void {
    this.current?.exitIdle();
  }

  resetBackoff(): void {
    for (const child of this.children.values()) child.resetBackoff();
  }

  destroy(): void {
    this.destroyed = true;
    for (const child of this.children.values()) child.destroy();
    this.children.clear();
    this.current = null;
  }

  getTypeName(): string {
    return POLICY.priority;
  }

  /** A115: a child no longer in the config goes now; its name is never given out again. */
  private dropChild(child: PriorityChild): void {
    this.children.delete(child.name);
    if (this.current === child) this.current = null;
    if (trace.enabled) trace.log(`destroying child ${child.name}: not in the config`);
    child.destroy();
  }

  private updateChild(child: PriorityChild, entry: PriorityChildConfig): void {
    child.ignoreReresolutionRequests = entry.ignoreReresolutionRequests;
    const endpoints =
      this.endpointsError ?? experimental.statusOrFromValue(this.groups.get(entry.name) ?? []);
    child.update(endpoints, entry.config, this.options, this.resolutionNote);
  }

  /**
   * Chooses a priority and reports its state. A child may report synchronously while it is
   * created inside the choice: that report asks for one more pass instead of re-entering.
   */
  private chooseAndReport(force: boolean): void {
    if (this.choosing) {
      this.chooseAgain = true;
      return;
    }
    this.choosing = true;
    try {
      // Choosing is idempotent, so a few passes always settle; the bound is a safety net.
      for (let pass = 0; pass < 8; pass++) {
        this.chooseAgain = false;
        this.choosePriority();
        if (!this.chooseAgain) break;
      }
    } finally {
      this.choosing = false;
    }
    this.report(force);
  }

  /** A56 "Algorithm for Choosing a Priority". */
  private choosePriority(): void {
    const entries = this.config?.children ?? [];
    if (entries.length === 0) {
      this.current = null;
      return;
    }
    for (let i = 0; i < entries.length; i++) {
      const child = this.activeChild(entries[i]!);
      if (child.state === connectivityState.READY || child.state === connectivityState.IDLE) {
        return this.setCurrent(i, true);
      }
      if (child.failoverTimerPending) return this.setCurrent(i, false);
    }
    for (let i = 0; i < entries.length; i++) {
      if (this.children.get(entries[i]!.name)?.state === connectivityState.CONNECTING) {
        return this.setCurrent(i, false);
      }
    }
    this.setCurrent(entries.length - 1, false);
  }

  /** The child for `entry`, created (lazily, A56 "Child Lifetime") or reactivated. */
  private activeChild(entry: PriorityChildConfig): PriorityChild {
    let child = this.children.get(entry.name);
    if (child) {
      child.reactivate();
      return child;
    }
    child = new PriorityChild(entry.name, this.helper, this);
    this.children.set(entry.name, child);
    if (trace.enabled) trace.log(`creating child ${entry.name}`);
    this.updateChild(child, entry);
    return child;
  }

  private setCurrent(index: number, deactivateLower: boolean): void {
    const entries = this.config!.children;
    if (deactivateLower) {
      for (const entry of entries.slice(index + 1)) {
        this.children.get(entry.name)?.deactivate(this.retentionMs);
      }
    }
    this.current = this.children.get(entries[index]!.name) ?? null;
  }

  private report(force: boolean): void {
    if (this.destroyed) return;
    let state: connectivityState;
    let picker: experimental.Picker;
    let message: string | null;
    if (this.current) {
      ({ state, picker, errorMessage: message } = this.current);
    } else {
      state = connectivityState.TRANSIENT_FAILURE;
      message = EMPTY_PRIORITY_LIST_MESSAGE;
      picker = this.emptyListPicker ??= new experimental.UnavailablePicker({
        code: status.UNAVAILABLE,
        details: EMPTY_PRIORITY_LIST_MESSAGE,
      });
    }
    const last = this.lastReported;
    if (
      !force &&
      last &&
      last.state === state &&
      last.picker === picker &&
      last.message === message
    ) {
      return;
    }
    this.lastReported = { state, picker, message };
    if (trace.enabled) {
      trace.log(`${this.current?.name ?? '(none)'} chosen: ${connectivityState[state]}`);
    }
    this.helper.updateState(state, picker, message);
  }
}

/** Registers `xds_client.priority` in grpc-js (idempotent: the registry is a map by name). */
export function registerPriorityPolicy(): void {
  experimental.registerLoadBalancerType(POLICY.priority, PriorityLoadBalancer, PriorityConfig);
}
