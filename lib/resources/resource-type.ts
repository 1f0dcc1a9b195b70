import type { FieldError } from '../errors';
import type { XdsServerConfig } from '../bootstrap';
import type { CertificateProviderConfig } from '../bootstrap';

/** What a decoder may know besides the bytes: which server sent them, and who will use them. */
export interface DecodeContext {
  /** The xDS server the resource came from (a Cluster's `lrs_server: {self: {}}` means it). */
  readonly server: XdsServerConfig;
  /**
   * The gRPC LB policies the resources' consumer can run (gRFC A52). Absent: a Cluster's
   * custom policies (`TypedStruct`) are skipped, and the policies this library knows are kept.
   */
  readonly lbPolicies?: LbPolicyRegistry | undefined;
  /**
   * The bootstrap's certificate provider instances (gRFC A29): a Cluster or Listener whose TLS
   * context names an instance not in it is NACKed. Absent: names are not checked.
   */
  readonly certificateProviders?: ReadonlyMap<string, CertificateProviderConfig> | undefined;
}

/**
 * What a Cluster's `load_balancing_policy` may name, as the consumer's LB policy registry
 * knows it (gRFC A52: an entry naming a policy the client lacks is skipped; a config the
 * policy rejects NACKs the Cluster). `xds-client/grpc` passes grpc-js's registry.
 */
export interface LbPolicyRegistry {
  /** Whether a policy of this name is registered (a custom policy, `weighted_round_robin`). */
  has(name: string): boolean;
  /** Why `config` is not a valid config for policy `name`; undefined when it is. */
  configError(name: string, config: Readonly<Record<string, unknown>>): string | undefined;
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
  /**
   * The resource from its bytes. The client passes its own copy of them, the one it caches: the
   * update may keep views into them (the Cluster's metadata does) without holding a response.
   */
  decode(bytes: Uint8Array, context: DecodeContext): DecodeResult<T>;
  /**
   * Optional fast path: the resource's name read from its bytes without a full decode, or
   * undefined when it cannot tell. Lets the client skip unchanged and unsubscribed resources
   * cheaply. On well-formed bytes it must equal `decode`'s name; the client NACKs a resource
   * whose decoded name differs from the peeked one.
   */
  peekName?(bytes: Uint8Array): string | undefined;
  /**
   * Optional: loads what `decode` needs (its decoder and validator modules) ahead of the first
   * resource. The client calls it once its first request for the type is on the wire, so that
   * the loading overlaps the wait for the server's answer instead of delaying the first update.
   * Must not throw; calling it again does nothing.
   */
  prepare?(): void;
}
