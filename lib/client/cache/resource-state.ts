import { logError } from '../../trace';
import type { XdsServerConfig } from '../../bootstrap';
import type { ResourceType } from '../../resources/resource-type';
import type { XdsError } from '../../errors';
import type { ResourceWatcher } from './resource-watcher';

/** CSDS's client status of a resource. */
export type ResourceStatus = 'REQUESTED' | 'ACKED' | 'NACKED' | 'DOES_NOT_EXIST';

/** Where a resource lives: the one part of a server channel a ResourceState needs. */
export interface ResourceHome {
  /** The connectivity error of the server for a type, replayed to new watchers. */
  connectivityErrorOf(typeUrl: string): XdsError | undefined;
}

/** The home of a resource no server serves (its name's authority is not in the bootstrap). */
const NO_HOME: ResourceHome = { connectivityErrorOf: () => undefined };

interface WatcherEntry<T> {
  readonly watcher: ResourceWatcher<T>;
  /** Its first delivery is queued; until then it is skipped by broadcasts (it gets the latest). */
  pendingInitial: boolean;
  active: boolean;
}

/**
 * The cache entry of one (type, name): the last good resource and its serialized bytes, CSDS
 * metadata, the current error, the does-not-exist timer and the watchers. Its state changes
 * only through the transitions below, and every delivery to watchers goes through here, so the
 * no-re-entrancy and exception rules live in one place.
 */
export class ResourceState<T> {
  private readonly watchers = new Set<WatcherEntry<T>>();
  private _resource: T | undefined;
  private _bytes: Uint8Array | undefined;
  private _version: string | undefined;
  private _status: ResourceStatus = 'REQUESTED';
  private _updateTime: Date | undefined;
  private _error: XdsError | undefined;
  private _failedVersion: string | undefined;
  private _failedTime: Date | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The version the server gave the resource itself (a delta or `Resource` wrapper's). */
  private _resourceVersion: string | undefined;
  private _source: XdsServerConfig | undefined;
  /** The resource's TTL runs out: it expires unless refreshed first. */
  private ttlTimer: NodeJS.Timeout | undefined;
  /**
   * The current stream owes this resource a verdict: it has no value and the stream has said
   * nothing of it yet, so the next request naming it starts the does-not-exist timer.
   */
  private timerDue = true;
  private _deletionIgnored = false;

  constructor(
    readonly type: ResourceType<T>,
    readonly name: string,
    readonly home: ResourceHome,
  ) {}

  /** A resource that can never be served: its watchers get `error` and nothing else. */
  static failed<T>(type: ResourceType<T>, name: string, error: XdsError): ResourceState<T> {
    const state = new ResourceState(type, name, NO_HOME);
    state.timerDue = false;
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
    return this.watchers.size;
  }

  // ---- transitions ----

  /** A new valid version. `now` is shared by a whole response (one Date, not one each). */
  setResource(
    resource: T,
    bytes: Uint8Array,
    version: string,
    now: Date,
    resourceVersion?: string,
  ): void {
    this._resource = resource;
    this._bytes = bytes;
    this._resourceVersion = resourceVersion;
    this.markAcked(version, now);
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
    this.settle();
  }

  /**
   * A version failed validation. It exists, even if invalid: no does-not-exist timer. With
   * `dropCached` (nothing good cached, or A88's fail_on_data_errors) the cached value goes too.
   */
  markNacked(error: XdsError, version: string, now: Date, dropCached: boolean): void {
    this._status = 'NACKED';
    this._failedVersion = version;
    this._failedTime = now;
    this._error = error;
    if (dropCached) this.dropResource();
    this.settle();
  }

  /**
   * The resource's TTL, from an update or a heartbeat: `onExpired` runs if no other comes
   * within `ttlMs`. Undefined removes the TTL (a resource sent without one lives on).
   */
  setTtl(ttlMs: number | undefined, onExpired: (state: this) => void): void {
    clearTimeout(this.ttlTimer);
    this.ttlTimer = undefined;
    if (ttlMs === undefined) return;
    this.ttlTimer = setTimeout(() => {
      this.ttlTimer = undefined;
      if (this._resource !== undefined) onExpired(this);
    }, ttlMs);
    this.ttlTimer.unref?.();
  }

  /** Removed by the server (left out of a SotW response, delta's removed_resources), or expired. */
  markDeleted(error: XdsError): void {
    this.dropResource();
    this.setTtl(undefined, () => undefined);
    this.markDoesNotExist(error);
  }

  /** A53: the server deleted it and the client keeps it. True the first time only (log once). */
  markDeletionIgnored(): boolean {
    if (this._deletionIgnored) return false;
    this._deletionIgnored = true;
    return true;
  }

  /**
   * gRFC A57: a request naming the resource was written on the stream. Starts the timer if the
   * stream owes it a verdict; `onExpired` runs if it fires with still nothing cached.
   */
  requestWritten(timeoutMs: number, onExpired: (state: this) => void): void {
    if (!this.timerDue || this.timer || this._resource !== undefined) return;
    this.timerDue = false;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // The cache is checked again: the resource may have arrived since the timer was armed.
      if (this._resource === undefined) onExpired(this);
    }, timeoutMs);
    this.timer.unref?.();
  }

  /** The does-not-exist timer fired, or the server deleted it. */
  markDoesNotExist(error: XdsError): void {
    this._status = 'DOES_NOT_EXIST';
    this._error = error;
    this.settle();
  }

  /**
   * The stream ended: its timer goes with it. A resource with no value is owed a fresh verdict
   * by the next stream (as gRPC C-core does), whatever this one said of it.
   */
  streamEnded(): void {
    this.stopTimer();
    this.timerDue = this._resource === undefined;
  }

  /** The resource leaves the cache, or the client closes: stop the timer, drop the watchers. */
  dispose(): void {
    this.stopTimer();
    clearTimeout(this.ttlTimer);
    for (const entry of this.watchers) entry.active = false;
    this.watchers.clear();
  }

  /** The current stream said something of the resource: nothing more to wait for. */
  private settle(): void {
    this.timerDue = false;
    this.stopTimer();
  }

  private stopTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private dropResource(): void {
    this._resource = undefined;
    this._bytes = undefined;
    this._resourceVersion = undefined;
    this._source = undefined;
  }

  // ---- watchers ----

  /** Adds a watcher; it gets the cached resource and current errors on a later tick. */
  addWatcher(watcher: ResourceWatcher<T>): () => boolean {
    const entry: WatcherEntry<T> = { watcher, pendingInitial: true, active: true };
    this.watchers.add(entry);
    queueMicrotask(() => this.deliverInitial(entry));
    return () => {
      if (!entry.active) return false;
      entry.active = false;
      this.watchers.delete(entry);
      return true;
    };
  }

  notifyChanged(): void {
    const resource = this._resource;
    if (resource === undefined) return;
    this.broadcast((w) => w.onResourceChanged(resource));
  }

  notifyResourceError(error: XdsError): void {
    this.broadcast((w) => w.onResourceError(error));
  }

  notifyAmbientError(error: XdsError): void {
    this.broadcast((w) => w.onAmbientError?.(error));
  }

  /** `onAmbientError` if a resource is cached (keep it), else `onResourceError`. */
  notifyError(error: XdsError): void {
    if (this._resource === undefined) this.notifyResourceError(error);
    else this.notifyAmbientError(error);
  }

  private broadcast(call: (watcher: ResourceWatcher<T>) => void): void {
    for (const entry of [...this.watchers]) {
      if (entry.active && !entry.pendingInitial) invokeWatcher(entry.watcher, call);
    }
  }

  /** In order: the cached resource, then this resource's error, then the server's. */
  private deliverInitial(entry: WatcherEntry<T>): void {
    entry.pendingInitial = false;
    if (!entry.active) return;
    const { watcher } = entry;
    const resource = this._resource;
    if (resource !== undefined) {
      invokeWatcher(watcher, (w) => w.onResourceChanged(resource));
      for (const error of [this._error, this.home.connectivityErrorOf(this.type.typeUrl)]) {
        if (error && entry.active) invokeWatcher(watcher, (w) => w.onAmbientError?.(error));
      }
      return;
    }
    const error = this._error ?? this.home.connectivityErrorOf(this.type.typeUrl);
    if (error && entry.active) invokeWatcher(watcher, (w) => w.onResourceError(error));
  }
}

/** Runs one watcher callback; what it throws is logged and goes no further. */
function invokeWatcher<T>(watcher: ResourceWatcher<T>, call: (w: ResourceWatcher<T>) => void) {
  try {
    call(watcher);
  } catch (e) {
    logError(`xds-client: a resource watcher threw: ${e instanceof Error ? e.stack : String(e)}`);
  }
}
