import type { FieldError } from '../errors';
import type { XdsServerConfig } from '../bootstrap';

/** What a decoder may know besides the bytes: which server sent them. */
export interface DecodeContext {
  /** The xDS server the resource came from (a Cluster's `lrs_server: {self: {}}` means it). */
  readonly server: XdsServerConfig;
}

export type DecodeResult<T> =
  | { readonly name: string; readonly resource: T }
  /**
   * Invalid. `name` is set whenever the resource's name could be read, so that its watchers
   * get the error; without it the error is reported for the response as a whole.
   */
  | { readonly name: string | undefined; readonly errors: readonly FieldError[] };

/**
 * A kind of xDS resource. The client core knows resources only through this interface, so a
 * user can watch a type of their own with `client.watch(type, name, watcher)`.
 * `decode` is pure: no I/O, no client state, never throws.
 */
export interface ResourceType<T> {
  /** `type.googleapis.com/envoy.config.cluster.v3.Cluster`. */
  readonly typeUrl: string;
  /** A short name for messages and logs: `Cluster`. */
  readonly typeName: string;
  /**
   * State-of-the-world rule: a response carries every resource of this type that exists, so a
   * cached one missing from it has been deleted (Listener and Cluster).
   */
  readonly allResourcesRequiredInSotW: boolean;
  decode(bytes: Uint8Array, context: DecodeContext): DecodeResult<T>;
  /**
   * Optional fast path: the resource's name read from its bytes without a full decode, or
   * undefined when it cannot tell. Lets the client skip unchanged and unsubscribed resources
   * cheaply. On well-formed bytes it must equal `decode`'s name; the client NACKs a resource
   * whose decoded name differs from the peeked one.
   */
  peekName?(bytes: Uint8Array): string | undefined;
}
