// What a discovery mechanism reports to the cluster resolver.
import type { XdsError } from '../errors';
import type { DropOverload, LocalityEndpoints } from '../resources/endpoint/update';

/** Nothing yet, localities by priority (with EDS drop categories), or why there are none. */
export type DiscoveryResult =
  | { readonly kind: 'pending' }
  | {
      readonly kind: 'ok';
      readonly priorities: readonly (readonly LocalityEndpoints[])[];
      readonly drops?: readonly DropOverload[];
    }
  | { readonly kind: 'error'; readonly error: XdsError };

/** A running discovery mechanism: EDS (eds-discovery.ts) or logical DNS (logical-dns.ts). */
export interface Discovery {
  readonly result: DiscoveryResult;
  /** Resolves again now (logical DNS); EDS has nothing to do: the server pushes. */
  resolveNow(): void;
  close(): void;
}
