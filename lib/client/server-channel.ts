import type { XdsServerConfig } from '../bootstrap';
import type { XdsError } from '../errors';
import type { AdsStream } from './ads-stream';
import type { Backoff } from './backoff';
import type { ResourceHome, ResourceState } from './resource-state';
import type { XdsTransport } from './transport';

/** What a response's verdict hands back for its unchanged re-sends: the entries it confirmed. */
export type AppliedResources = readonly ResourceState<unknown>[];

/** One xDS server: its stream, its connectivity state and the resources it serves. */
export class ServerChannel implements ResourceHome {
  connectivityError: XdsError | undefined;
  /** Per type, the version of the last response processed (for the dump). */
  readonly systemVersions = new Map<string, string>();
  private readonly byType = new Map<string, Map<string, ResourceState<unknown>>>();

  constructor(
    readonly config: XdsServerConfig,
    /** serverKey(config): the channel's key in the client's maps. */
    readonly key: string,
    readonly transport: XdsTransport,
    readonly stream: AdsStream<AppliedResources>,
    readonly backoff: Backoff,
  ) {}

  /** The cache entries of one type, by canonical name. */
  resourcesOf(typeUrl: string): ReadonlyMap<string, ResourceState<unknown>> | undefined {
    return this.byType.get(typeUrl);
  }

  get(typeUrl: string, name: string): ResourceState<unknown> | undefined {
    return this.byType.get(typeUrl)?.get(name);
  }

  add(state: ResourceState<unknown>): void {
    let byName = this.byType.get(state.type.typeUrl);
    if (!byName) this.byType.set(state.type.typeUrl, (byName = new Map()));
    byName.set(state.name, state);
  }

  /** Removes the entry if it is still the one cached under its name; true if it was. */
  remove(state: ResourceState<unknown>): boolean {
    const byName = this.byType.get(state.type.typeUrl);
    if (byName?.get(state.name) !== state) return false;
    byName.delete(state.name);
    if (byName.size === 0) this.byType.delete(state.type.typeUrl);
    return true;
  }

  get isEmpty(): boolean {
    return this.byType.size === 0;
  }

  *allResources(): Iterable<ResourceState<unknown>> {
    for (const byName of this.byType.values()) yield* byName.values();
  }

  clear(): void {
    this.byType.clear();
  }
}
