// Stable names for the priorities of one discovery mechanism. The priority LB policy keys its
// children by name, so a name that survives an update keeps that child's connections and
// failover state. This is the behaviour of gRPC C-core's xds_cluster_resolver and grpc-js's
// `localityPriorities`: names follow localities, not positions.
import type { LocalityName } from '../resources/endpoint/update';
import { SmallMap } from '../small-map';

/** The empty locality, which a logical DNS priority uses and an empty priority stands for. */
export const EMPTY_LOCALITY: LocalityName = Object.freeze({ region: '', zone: '', subZone: '' });

export function localityKey(locality: LocalityName): string {
  return JSON.stringify([locality.region, locality.zone, locality.subZone]);
}

const EMPTY_KEY = localityKey(EMPTY_LOCALITY);

/**
 * Names the priorities of one mechanism, `<cluster>[child<N>]`, N from a counter of its own.
 *
 * On each update, priority p takes the name that the previous update gave to the priority
 * holding the first of p's localities whose old name is still free in this update; if none,
 * a new name. So a locality that keeps its priority keeps the name, and a priority whose
 * localities moved together to another position brings its name along.
 *
 * A priority without localities (a failed mechanism) counts as holding the empty locality, so
 * a logical DNS priority keeps its name from failure to success.
 */
export class PriorityNamer {
  private counter = 0;
  /** A SmallMap: most priorities are one locality. */
  private byLocality = new SmallMap<string, string>();

  constructor(private readonly cluster: string) {}

  /**
   * `used` holds the names already given in this update (by earlier mechanisms too): a name is
   * used once per update.
   */
  assign(priorities: readonly (readonly { locality: LocalityName }[])[], used: Set<string>) {
    const next = new SmallMap<string, string>();
    const names = priorities.map((localities) => {
      const keys = localities.length ? localities.map((l) => localityKey(l.locality)) : [EMPTY_KEY];
      let name: string | undefined;
      for (const key of keys) {
        const old = this.byLocality.get(key);
        if (old !== undefined && !used.has(old)) {
          name = old;
          break;
        }
      }
      while (name === undefined || used.has(name)) name = `${this.cluster}[child${this.counter++}]`;
      used.add(name);
      for (const key of keys) if (!next.has(key)) next.set(key, name);
      return name;
    });
    this.byLocality = next;
    return names;
  }
}
