import { logError } from '../trace';
import type { ResourceType } from '../resources/resource-type';
import type { XdsError } from '../errors';
import type { ResourceWatcher } from './resource-watcher';

/** CSDS's client status of a resource. */
export type ResourceStatus = 'REQUESTED' | 'ACKED' | 'NACKED' | 'DOES_NOT_EXIST';

/** Where a resource lives: the one part of a server channel a ResourceState needs. */
export interface ResourceHome {
  /** The connectivity error of the server, replayed to new watchers. */
  readonly connectivityError: XdsError | undefined;
}

interface WatcherEntry<T> {
  readonly watcher: ResourceWatcher<T>;
  /** Its first delivery is queued; until then it is skipped by broadcasts (it gets the latest). */
  pendingInitial: boolean;
  active: boolean;
}

/**
 * The cache entry of one (type, name): the last good resource and its serialized bytes, CSDS
 * metadata, the current error, the does-not-exist timer and the watchers. Every delivery to
 * watchers goes through here, so the no-re-entrancy and exception rules live in one place.
 */
export class ResourceState<T> {
  private readonly watchers = new Set<WatcherEntry<T>>();
  resource: T | undefined;
  /** The bytes `resource` was decoded from: an identical re-send is detected by comparing them. */
  bytes: Uint8Array | undefined;
  version: string | undefined;
  status: ResourceStatus = 'REQUESTED';
  updateTime: Date | undefined;
  /** The error about this resource itself (NACK, does not exist), replayed to new watchers. */
  error: XdsError | undefined;
  failedVersion: string | undefined;
  failedTime: Date | undefined;
  timer: NodeJS.Timeout | undefined;
  /** A53: the server deleted it, the client kept it. */
  deletionIgnored = false;

  constructor(
    readonly type: ResourceType<T>,
    readonly name: string,
    readonly home: ResourceHome,
  ) {}

  get watcherCount(): number {
    return this.watchers.size;
  }

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

  /** Drops every watcher without telling them (the client is closing). */
  clearWatchers(): void {
    for (const entry of this.watchers) entry.active = false;
    this.watchers.clear();
  }

  stopTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** A new valid version. `now` is shared by a whole response (one Date, not one each). */
  setResource(resource: T, bytes: Uint8Array, version: string, now: Date): void {
    this.resource = resource;
    this.bytes = bytes;
    this.markAcked(version, now);
  }

  /** The server (re)confirmed what is cached: same bytes, new version. */
  markAcked(version: string, now: Date): void {
    this.version = version;
    this.status = 'ACKED';
    this.updateTime = now;
    this.error = undefined;
    this.deletionIgnored = false;
    this.stopTimer();
  }

  dropResource(): void {
    this.resource = undefined;
    this.bytes = undefined;
  }

  notifyChanged(): void {
    const resource = this.resource;
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
    if (this.resource === undefined) this.notifyResourceError(error);
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
    const resource = this.resource;
    if (resource !== undefined) {
      invokeWatcher(watcher, (w) => w.onResourceChanged(resource));
      for (const error of [this.error, this.home.connectivityError]) {
        if (error && entry.active) invokeWatcher(watcher, (w) => w.onAmbientError?.(error));
      }
      return;
    }
    const error = this.error ?? this.home.connectivityError;
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
