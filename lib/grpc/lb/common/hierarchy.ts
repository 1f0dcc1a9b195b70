// Hierarchical addresses (gRFC A56): each endpoint carries the path of child names it belongs
// to — [priority, locality] — and each level of the LB tree hands a child the endpoints under
// its name, with that level taken off the path.

import type { experimental } from '@grpc/grpc-js';
import { SmallMap } from '../../../small-map';

type Endpoint = experimental.Endpoint;

/** An endpoint with the rest of its path through the tree. */
export interface PathedEndpoint extends Endpoint {
  readonly xdsClientPath?: readonly string[];
}

/** `endpoint` placed under `path` (a copy; grpc-js keeps the addresses). */
export function withPath(endpoint: Endpoint, path: readonly string[]): PathedEndpoint {
  return { ...endpoint, xdsClientPath: path };
}

/**
 * The endpoints by their first path element, each with that element taken off. Endpoints with
 * no path left belong to no child and are left out.
 */
export function groupByFirstPathElement(
  endpoints: readonly Endpoint[],
): SmallMap<string, PathedEndpoint[]> {
  // A SmallMap: the priority policy keeps its groups, mostly one.
  const groups = new SmallMap<string, PathedEndpoint[]>();
  for (const endpoint of endpoints as readonly PathedEndpoint[]) {
    const path = endpoint.xdsClientPath;
    const first = path?.[0];
    if (first === undefined) continue;
    let group = groups.get(first);
    if (!group) groups.set(first, (group = []));
    group.push({ ...endpoint, xdsClientPath: path!.slice(1) });
  }
  // The children keep their groups: copies of their own length (an array grown by push keeps
  // room for 17 elements; slice's are as long as they hold).
  for (const [name, group] of groups) groups.set(name, group.slice());
  return groups;
}
