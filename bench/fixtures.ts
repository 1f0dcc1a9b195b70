// Seeded fixtures: the resources every workload serves, encoded once. Resource i is generated from
// its own PRNG stream (seed, i), so the same call gives byte-identical resources on every run and
// on every machine (`fingerprint` prints a digest of them in the table's header to prove it), and
// resource i is the same whether 1,000 or 10,000 are asked for.
//
// The shapes follow what Istio and Traffic Director send gRPC clients: EDS clusters with circuit
// breakers, Istio service metadata, and on some outlier detection and LRS; ClusterLoadAssignments
// with weighted localities in two priorities. Only fields that our protos/ and the peer's both
// know are used, so the three decoders see exactly the same information.
import { createHash } from 'node:crypto';
import { toMessageBytes, CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL } from '../lib/testing';

export const SEED = 0x5eed_2024;

/** A resource ready to serve: its name and its encoded bytes. */
export interface Fixture {
  readonly name: string;
  readonly bytes: Uint8Array;
}

/** mulberry32: tiny, fast and good enough to pick fixture values. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The PRNG stream of resource `index` of a family (`salt` tells families apart). */
function streamOf(seed: number, salt: number, index: number): () => number {
  return prng(seed ^ Math.imul(index + 1, 0x9e3779b1) ^ Math.imul(salt, 0x85ebca6b));
}

// prettier-ignore
const WORDS = [
  'reviews', 'ratings', 'details', 'productpage', 'checkout', 'payments', 'ledger', 'catalog',
  'search', 'inventory', 'shipping', 'auth', 'profile', 'frontend', 'gateway', 'billing',
  'orders', 'cart', 'recommend', 'ads', 'email', 'currency', 'quotes', 'notify',
] as const;

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function int(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** Istio's cluster naming: `outbound|<port>||<host>`. */
function clusterName(random: () => number, index: number): string {
  const service = `${pick(random, WORDS)}-${pick(random, WORDS)}-${index}`;
  const namespace = `${pick(random, WORDS)}-ns-${index % 97}`;
  const port = pick(random, [80, 443, 8080, 9080, 15010]);
  return `outbound|${port}||${service}.${namespace}.svc.cluster.local`;
}

const ADS_SOURCE = { ads: {}, resource_api_version: 'V3' };

function clusterJson(index: number, generation: number, seed: number): Record<string, unknown> {
  const random = streamOf(seed, 1, index);
  const name = clusterName(random, index);
  const host = name.slice(name.lastIndexOf('|') + 1);
  const json: Record<string, unknown> = {
    name,
    type: 'EDS',
    eds_cluster_config: { eds_config: ADS_SOURCE, service_name: name },
    connect_timeout: `${int(random, 1, 10)}s`,
    lb_policy: 'ROUND_ROBIN',
    circuit_breakers: {
      thresholds: [
        {
          priority: 'DEFAULT',
          // A new generation is a new max_requests: one field changed, the rest identical.
          max_requests: int(random, 512, 4096) + generation,
          max_connections: int(random, 1024, 8192),
          max_pending_requests: int(random, 1024, 8192),
          max_retries: int(random, 1, 5),
        },
      ],
    },
    metadata: {
      filter_metadata: {
        istio: { services: [{ name: host.split('.')[0], namespace: host.split('.')[1] }] },
      },
    },
  };
  if (random() < 0.3) {
    json['outlier_detection'] = {
      consecutive_5xx: int(random, 3, 10),
      interval: `${int(random, 5, 30)}s`,
      base_ejection_time: `${int(random, 10, 60)}s`,
      max_ejection_percent: int(random, 10, 50),
    };
  }
  if (random() < 0.2) json['lrs_server'] = { self: {} };
  return json;
}

/** `count` EDS clusters, resources 0..count-1 of the family (a generation: new bytes, same names). */
export function clusters(count: number, seed = SEED, generation = 0): Fixture[] {
  const out: Fixture[] = [];
  for (let i = 0; i < count; i++) out.push(cluster(i, generation, seed));
  return out;
}

/** Cluster `index` as `clusters()` makes it (generation 0), or with max_requests moved on. */
export function cluster(index: number, generation: number, seed = SEED): Fixture {
  const json = clusterJson(index, generation, seed);
  return { name: json['name'] as string, bytes: toMessageBytes(CLUSTER_TYPE_URL, json) };
}

function loadAssignmentJson(
  name: string,
  index: number,
  endpointCount: number,
  seed: number,
  generation = 0,
): Record<string, unknown> {
  const random = streamOf(seed, 2, index);
  // Three localities at priority 0 and one at priority 1, as a multi-zone service has.
  const localities = [
    { region: 'us-central1', zone: 'us-central1-a', priority: 0 },
    { region: 'us-central1', zone: 'us-central1-b', priority: 0 },
    { region: 'us-central1', zone: 'us-central1-c', priority: 0 },
    { region: 'us-east1', zone: 'us-east1-b', priority: 1 },
  ];
  const perLocality = Math.ceil(endpointCount / localities.length);
  let made = 0;
  const endpoints = localities.map((locality, l) => {
    const lbEndpoints = [];
    for (let e = 0; e < perLocality && made < endpointCount; e++, made++) {
      // Unique within the assignment: 10.<l>.<e>.<random>, as pods in one subnet per zone.
      const address = `10.${l * 16 + (index % 16)}.${e}.${int(random, 1, 254)}`;
      lbEndpoints.push({
        endpoint: { address: { socket_address: { address, port_value: 8080 } } },
        health_status: random() < 0.95 ? 'HEALTHY' : 'UNKNOWN',
        load_balancing_weight: int(random, 1, 10),
      });
    }
    return {
      locality: { region: locality.region, zone: locality.zone, sub_zone: '' },
      load_balancing_weight: int(random, 1, 100) + generation,
      priority: locality.priority,
      lb_endpoints: lbEndpoints,
    };
  });
  return { cluster_name: name, endpoints, policy: { overprovisioning_factor: 140 } };
}

/** `count` ClusterLoadAssignments of `endpointCount` endpoints, named as `clusters(count)`. */
export function loadAssignments(
  count: number,
  endpointCount: number,
  seed = SEED,
  generation = 0,
): Fixture[] {
  return clusters(count, seed).map(({ name }, i) => ({
    name,
    bytes: toMessageBytes(
      ENDPOINT_TYPE_URL,
      loadAssignmentJson(name, i, endpointCount, seed, generation),
    ),
  }));
}

/** An aggregate cluster tree (gRFC A37) with its leaves' endpoints. */
export interface AggregateTree {
  readonly root: string;
  /** Every cluster of the tree: the root, the middle aggregates and the EDS leaves. */
  readonly clusters: readonly Fixture[];
  readonly endpoints: readonly Fixture[];
  readonly leaves: number;
  /** Each leaf's assignment has localities at priorities 0 and 1. */
  readonly prioritiesPerLeaf: number;
}

/**
 * `total` clusters: a root aggregate over `middle` aggregates, which share the EDS leaves
 * between them in order; each leaf has a small ClusterLoadAssignment of 2 × 5 endpoints.
 */
export function aggregateTree(total: number, middle = 9, seed = SEED): AggregateTree {
  const leafCount = total - 1 - middle;
  const leaves = Array.from({ length: leafCount }, (_, i) => `tree-leaf-${i}`);
  const middles = Array.from({ length: middle }, (_, m) => `tree-mid-${m}`);
  const aggregate = (name: string, children: readonly string[]) => ({
    name: name,
    bytes: toMessageBytes(CLUSTER_TYPE_URL, {
      name,
      cluster_type: {
        name: 'envoy.clusters.aggregate',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig',
          clusters: [...children],
        },
      },
      lb_policy: 'ROUND_ROBIN',
    }),
  });
  const treeClusters: Fixture[] = [aggregate('tree-root', middles)];
  middles.forEach((name, m) => {
    treeClusters.push(
      aggregate(
        name,
        leaves.filter((_, i) => i % middle === m),
      ),
    );
  });
  for (const name of leaves) {
    treeClusters.push({
      name,
      bytes: toMessageBytes(CLUSTER_TYPE_URL, {
        name,
        type: 'EDS',
        eds_cluster_config: { eds_config: ADS_SOURCE },
        lb_policy: 'ROUND_ROBIN',
      }),
    });
  }
  const endpoints = leaves.map((name, i) => {
    const json = loadAssignmentJson(name, 100_000 + i, 20, seed) as {
      endpoints: { priority: number }[];
    };
    // Two of its four localities of 5 endpoints: the first (priority 0) and the last (1).
    json.endpoints = [json.endpoints[0]!, json.endpoints[3]!];
    return { name, bytes: toMessageBytes(ENDPOINT_TYPE_URL, json) };
  });
  return {
    root: 'tree-root',
    clusters: treeClusters,
    endpoints,
    leaves: leafCount,
    prioritiesPerLeaf: 2,
  };
}

/** A short digest of resources, for the table header: same digest, same bytes. */
export function fingerprint(...sets: readonly (readonly Fixture[])[]): string {
  const hash = createHash('sha256');
  for (const set of sets) for (const { bytes } of set) hash.update(bytes);
  return hash.digest('hex').slice(0, 12);
}

/** The total encoded size, for the workload descriptions. */
export function totalBytes(set: readonly Fixture[]): number {
  let total = 0;
  for (const { bytes } of set) total += bytes.length;
  return total;
}
