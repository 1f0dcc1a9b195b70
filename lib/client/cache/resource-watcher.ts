import type { XdsError } from '../../errors';

/**
 * The watcher contract (gRFC A88's shape).
 *
 * - `onResourceChanged(resource)`: a new valid version. Replace what you had.
 * - `onResourceError(error)`: drop what you had. NOT_FOUND: the resource does not exist (the
 *   does-not-exist timer fired, or the server deleted it); INVALID_ARGUMENT: it failed
 *   validation and no good version is cached; UNAVAILABLE: the server cannot be reached and no
 *   version was ever received.
 * - `onAmbientError(error)`: keep what you had, something is wrong around it: a newer version
 *   was NACKed, or the stream is down. Optional.
 *
 * Callbacks are asynchronous and never run inside `watch()` or `cancel()`. For one watcher they
 * run in order. A watcher added to a resource that is cached gets the resource, then any
 * current error, on a later tick. An exception thrown by a callback is logged and reaches
 * neither the other watchers nor the stream. Updates are frozen and shared by all watchers.
 */
export interface ResourceWatcher<T> {
  onResourceChanged(resource: T): void;
  onResourceError(error: XdsError): void;
  onAmbientError?(error: XdsError): void;
}

/** Returned by every `watch*()` call. `cancel()` is idempotent. */
export interface WatchHandle {
  cancel(): void;
}
