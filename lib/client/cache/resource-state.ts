import { logError } from '../../trace';
import type { XdsServerConfig } from '../../bootstrap';
import type { ResourceType } from '../../resources/resource-type';
import type { XdsError } from '../../errors';
import { DoesNotExistTimer, type TimedEntry } from './does-not-exist-timer';
import type { ResourceWatcher, WatchHandle } from './resource-watcher';

/**
 * CSDS's client status of a resource. `TIMEOUT` is gRFC A88's: the does-not-exist timer fired
 * on a server with `resource_timer_is_transient_error`.
 */
export type ResourceStatus = 'REQUESTED' | 'ACKED' | 'NACKED' | 'DOES_NOT_EXIST' | 'TIMEOUT';

/** The one thing a cache entry needs of its authority (core/authority.ts). */
export interface EntryAuthority {
  /** The connectivity error of the server it uses for a type, replayed to new watchers. */
  connectivityErrorOf(typeUrl: string): XdsError | undefined;
}

/** The authority of a resource no server serves (its name's authority is not in the bootstrap). */
const NO_AUTHORITY: EntryAuthority = { connectivityErrorOf: () => undefined };

/**
 * Where a transition hands the watcher notification it owes: run now, or queued until the
 * response's verdict is recorded (response-processor.ts). Every transition that changes what
 * watchers see takes one, so no caller can change the state and forget to tell them.
 */
export type Deliver = (notification: Notification) => void;

/**
 * A watcher notification owed: a function to run, or the entry itself when its watchers are to
 * get its current resource. The second is one per applied resource of a response, queued until
 * the whole response is processed: no closure is made (and kept through the response) for it.
 */
export type Notification = (() => void) | ResourceState<unknown>;

/** Runs a notification. */
export function runNotification(notification: Notification): void {
  if (typeof notification === 'function') notification();
  else notification.notifyChanged();
}

/** Delivers at once (a timer fired, a TTL ran out). */
export const deliverNow: Deliver = runNotification;

/** Told when a resource's last watcher cancels (the client unsubscribes it, at the tick's end). */
export interface LastWatcherListener<A> {
  lastWatcherLeft(authority: A, state: ResourceState<unknown>): void;
}

/**
 * One watch: its watcher, and its handle. A class, not an object of closures: a channel keeps
 * one per resource it watches, and a handle of closures was ~0.25 KiB each (bench/RESULTS.md,
 * heap per channel). `cancel` is a function made when first asked for, so that it works taken
 * off the handle (`const { cancel } = client.watch(…)`), as the handle's closure did.
 */
class WatcherEntry<T> implements WatchHandle {
  /** Its first delivery is queued; until then it is skipped by broadcasts (it gets the latest). */
  pendingInitial = true;
  active = true;
  private detached: (() => void) | undefined = undefined;

  constructor(
    private readonly state: ResourceState<T>,
    readonly watcher: ResourceWatcher<T>,
    private readonly left: LastWatcherListener<unknown> | undefined,
    private readonly authority: unknown,
  ) {}

  get cancel(): () => void {
    return (this.detached ??= () => this.stop());
  }

  private stop(): void {
    if (!this.active) return;
    this.active = false;
    const state = this.state;
    state.removeWatcher(this);
    if (this.left && state.watcherCount === 0) {
      this.left.lastWatcherLeft(this.authority, state as ResourceState<unknown>);
    }
  }
}

/**
 * The cache entry of one (type, name): the last good resource and its serialized bytes, CSDS
 * metadata, the current error, the does-not-exist timer and the watchers. Its state changes
 * only through the transitions below, each of which hands the watchers' notification to a
 * `Deliver`; every delivery to watchers goes through here, so the no-re-entrancy and exception
 * rules live in one place.
 */
export class ResourceState<T> implements TimedEntry {
  /**
   * One watcher as itself, more in a Set (in the order they came): most resources have one
   * watcher, and a Set is ~150 bytes even with one entry (bench/RESULTS.md, heap per channel).
   */
  private watchers: WatcherEntry<T> | Set<WatcherEntry<T>> | undefined;
  private _resource: T | undefined;
  private _bytes: Uint8Array | undefined;
  private _version: string | undefined;
  private _status: ResourceStatus = 'REQUESTED';
  private _updateTime: Date | undefined;
  private _error: XdsError | undefined;
  private _failedVersion: string | undefined;
  private _failedTime: Date | undefined;
  /** gRFC A57's timer (does-not-exist-timer.ts). */
  readonly doesNotExist = new DoesNotExistTimer(this);
  /** The version the server gave the resource itself (a delta or `Resource` wrapper's). */
  private _resourceVersion: string | undefined;
  private _source: XdsServerConfig | undefined;
  /** The resource's TTL runs out: it expires unless refreshed first. */
  private ttlTimer: NodeJS.Timeout | undefined;
  private _deletionIgnored = false;

  constructor(
    readonly type: ResourceType<T>,
    readonly name: string,
    readonly authority: EntryAuthority,
  ) {}

  /** A resource that can never be served: its watchers get `error` and nothing else. */
  static failed<T>(type: ResourceType<T>, name: string, error: XdsError): ResourceState<T> {
    const state = new ResourceState(type, name, NO_AUTHORITY);
    state.doesNotExist.settle();
    state._error = error;
    return state;
  }

  /** The last good version, if any. */
  get resource(): T | undefined {
    return this._resource;
  }
  /** The bytes `resource` was decoded from: an identical re-send is detected by comparing them. */
  get bytes(): Uint8Array | undefined {
    return this._bytes;
  }
  /** Version of the cached resource. */
  get version(): string | undefined {
    return this._version;
  }
  get status(): ResourceStatus {
    return this._status;
  }
  get updateTime(): Date | undefined {
    return this._updateTime;
  }
  /** The error about this resource itself (NACK, does not exist), replayed to new watchers. */
  get error(): XdsError | undefined {
    return this._error;
  }
  /** The version that was last NACKed, and when. */
  get failedVersion(): string | undefined {
    return this._failedVersion;
  }
  get failedTime(): Date | undefined {
    return this._failedTime;
  }
  /**
   * The version the server gave the resource itself: a delta resource's, or a SotW `Resource`
   * wrapper's (undefined for a bare SotW resource). A heartbeat must name it.
   */
  get resourceVersion(): string | undefined {
    return this._resourceVersion;
  }
  /**
   * The server the cached resource came from (gRFC A71: an authority may switch servers). Its
   * versions mean something to that server only.
   */
  get source(): XdsServerConfig | undefined {
    return this._source;
  }
  /** A53: the server deleted it, the client kept it. */
  get deletionIgnored(): boolean {
    return this._deletionIgnored;
  }
  get watcherCount(): number {
    const watchers = this.watchers;
    return watchers instanceof Set ? watchers.size : watchers ? 1 : 0;
  }

  // ---- transitions ----

  /**
   * A new valid version; its watchers get it. `now` is shared by a whole response (one Date,
   * not one each).
   */
  setResource(
    resource: T,
    bytes: Uint8Array,
    version: string,
    now: Date,
    resourceVersion: string | undefined,
    deliver: Deliver,
  ): void {
    this._resource = resource;
    this._bytes = bytes;
    this._resourceVersion = resourceVersion;
    this.markAcked(version, now);
    deliver(this as ResourceState<unknown>);
  }

  /** The cached bytes were received (or confirmed, same bytes) from `server`. */
  receivedFrom(server: XdsServerConfig): void {
    this._source = server;
  }

  /** The server (re)confirmed what is cached: same bytes, new version (and resource version). */
  markAcked(version: string, now: Date, resourceVersion?: string): void {
    this._version = version;
    if (resourceVersion !== undefined) this._resourceVersion = resourceVersion;
    this._status = 'ACKED';
    this._updateTime = now;
    this._error = undefined;
    this._deletionIgnored = false;
    this.doesNotExist.settle();
  }

  /**
   * A version failed validation. It exists, even if invalid: no does-not-exist timer. With
   * `dropCached` (nothing good cached, or A88's fail_on_data_errors) the cached value goes too
   * and watchers get a resource error; otherwise an ambient one.
   */
  markNacked(
    error: XdsError,
    version: string,
    now: Date,
    dropCached: boolean,
    deliver: Deliver,
  ): void {
    this._status = 'NACKED';
    this._failedVersion = version;
    this._failedTime = now;
    this._error = error;
    if (dropCached) this.dropResource();
    this.doesNotExist.settle();
    deliver(
      dropCached ? () => this.notifyResourceError(error) : () => this.notifyAmbientError(error),
    );
  }

  /**
   * The resource's TTL, from an update or a heartbeat: `onExpired` runs if no other comes
   * within `ttlMs`. Undefined removes the TTL (a resource sent without one lives on).
   */
  setTtl(ttlMs: number | undefined, onExpired: (state: this) => void): void {
    if (this.ttlTimer !== undefined) {
      clearTimeout(this.ttlTimer);
      this.ttlTimer = undefined;
    }
    if (ttlMs === undefined) return;
    this.ttlTimer = setTimeout(() => {
      this.ttlTimer = undefined;
      if (this._resource !== undefined) onExpired(this);
    }, ttlMs);
    this.ttlTimer.unref?.();
  }

  /**
   * Removed by the server (left out of a SotW response, delta's removed_resources), or its TTL
   * ran out: the cached value goes and watchers get `error`.
   */
  markDeleted(error: XdsError, deliver: Deliver): void {
    this.dropResource();
    this.setTtl(undefined, () => undefined);
    this.markDoesNotExist(error, deliver);
  }

  /**
   * A53: the server deleted it and the client keeps it; watchers get `error` as an ambient
   * error. Only the first time (log once): false if it was already so.
   */
  markDeletionIgnored(error: XdsError, deliver: Deliver): boolean {
    if (this._deletionIgnored) return false;
    this._deletionIgnored = true;
    deliver(() => this.notifyAmbientError(error));
    return true;
  }

  /** The does-not-exist timer fired, or the server said it does not exist: `error` to watchers. */
  markDoesNotExist(error: XdsError, deliver: Deliver): void {
    this.markUnreceived('DOES_NOT_EXIST', error, deliver);
  }

  /**
   * gRFC A88: the timer fired on a server that reports missing resources itself
   * (`resource_timer_is_transient_error`): the server is slow, not the resource gone. There is
   * nothing cached (the timer runs only then), so watchers get `error` as a resource error.
   */
  markTimedOut(error: XdsError, deliver: Deliver): void {
    this.markUnreceived('TIMEOUT', error, deliver);
  }

  private markUnreceived(
    status: 'DOES_NOT_EXIST' | 'TIMEOUT',
    error: XdsError,
    deliver: Deliver,
  ): void {
    this._status = status;
    this._error = error;
    this.doesNotExist.settle();
    deliver(() => this.notifyResourceError(error));
  }

  /**
   * The server cannot be reached for this resource (gRFC A57): nothing changes in the cache;
   * watchers keep what they have (`onAmbientError`) or learn there is nothing (`onResourceError`).
   */
  connectivityFailed(error: XdsError): void {
    if (this._resource === undefined) this.notifyResourceError(error);
    else this.notifyAmbientError(error);
  }

  /** The resource leaves the cache, or the client closes: stop the timers, drop the watchers. */
  dispose(): void {
    this.doesNotExist.stop();
    clearTimeout(this.ttlTimer);
    for (const entry of this.watcherList()) entry.active = false;
    this.watchers = undefined;
  }

  private dropResource(): void {
    this._resource = undefined;
    this._bytes = undefined;
    this._resourceVersion = undefined;
    this._source = undefined;
  }

  // ---- watchers ----

  /**
   * Adds a watcher; it gets the cached resource and current errors on a later tick. Cancelling
   * the last watch tells `left`, with `authority`.
   */
  addWatcher<A>(
    watcher: ResourceWatcher<T>,
    left?: LastWatcherListener<A>,
    authority?: A,
  ): WatchHandle {
    const entry = new WatcherEntry(
      this,
      watcher,
      left as LastWatcherListener<unknown> | undefined,
      authority,
    );
    const watchers = this.watchers;
    if (watchers instanceof Set) watchers.add(entry);
    else this.watchers = watchers ? new Set([watchers, entry]) : entry;
    queueMicrotask(() => this.deliverInitial(entry));
    return entry;
  }

  /** A watch was cancelled (by its WatcherEntry). */
  removeWatcher(entry: WatcherEntry<T>): void {
    const watchers = this.watchers;
    if (watchers instanceof Set) watchers.delete(entry);
    else if (watchers === entry) this.watchers = undefined;
  }

  /** Its watchers get the current resource (what a queued `Notification` of it does). */
  notifyChanged(): void {
    const resource = this._resource;
    if (resource === undefined) return;
    const watchers = this.watchers;
    if (watchers instanceof WatcherEntry) {
      // One watcher, as most resources have: no copy of the list, no closure per resource.
      if (watchers.active && !watchers.pendingInitial) deliverChanged(watchers.watcher, resource);
      return;
    }
    this.broadcast((w) => w.onResourceChanged(resource));
  }

  private notifyResourceError(error: XdsError): void {
    this.broadcast((w) => w.onResourceError(error));
  }

  private notifyAmbientError(error: XdsError): void {
    this.broadcast((w) => w.onAmbientError?.(error));
  }

  private broadcast(call: (watcher: ResourceWatcher<T>) => void): void {
    for (const entry of this.watcherList()) {
      if (entry.active && !entry.pendingInitial) invokeWatcher(entry.watcher, call);
    }
  }

  /** The watchers now (a copy: a watcher called may add or cancel watches). */
  private watcherList(): readonly WatcherEntry<T>[] {
    const watchers = this.watchers;
    return watchers instanceof Set ? [...watchers] : watchers ? [watchers] : [];
  }

  /** In order: the cached resource, then this resource's error, then the server's. */
  private deliverInitial(entry: WatcherEntry<T>): void {
    entry.pendingInitial = false;
    if (!entry.active) return;
    const { watcher } = entry;
    const resource = this._resource;
    if (resource !== undefined) {
      invokeWatcher(watcher, (w) => w.onResourceChanged(resource));
      for (const error of [this._error, this.authority.connectivityErrorOf(this.type.typeUrl)]) {
        if (error && entry.active) invokeWatcher(watcher, (w) => w.onAmbientError?.(error));
      }
      return;
    }
    const error = this._error ?? this.authority.connectivityErrorOf(this.type.typeUrl);
    if (error && entry.active) invokeWatcher(watcher, (w) => w.onResourceError(error));
  }
}

/** `invokeWatcher` of `onResourceChanged(resource)`, without a closure. */
function deliverChanged<T>(watcher: ResourceWatcher<T>, resource: T): void {
  try {
    watcher.onResourceChanged(resource);
  } catch (e) {
    logThrown(e);
  }
}

/** Runs one watcher callback; what it throws is logged and goes no further. */
function invokeWatcher<T>(watcher: ResourceWatcher<T>, call: (w: ResourceWatcher<T>) => void) {
  try {
    call(watcher);
  } catch (e) {
    logThrown(e);
  }
}

function logThrown(e: unknown): void {
  logError(`xds-client: a resource watcher threw: ${e instanceof Error ? e.stack : String(e)}`);
}
