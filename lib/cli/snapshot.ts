// Snapshot files for `serve` and the demo: { listeners, routes, clusters, endpoints }, each a
// list of resources in proto3 JSON, written as YAML or JSON. Checked whole before any of it is
// served, so a typo never leaves a half-applied snapshot.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { ManagementServer } from '../testing/management-server';
import { toMessageBytes } from '../testing/json-message';
import { resolveTypeUrl } from '../testing/resource-types';
import { CliError, EXIT, messageOf } from './errors';

/** Snapshot keys, in the order changes are pushed: CDS, EDS, LDS, RDS (make before break). */
export const SNAPSHOT_KEYS = ['clusters', 'endpoints', 'listeners', 'routes'] as const;
export type SnapshotKey = (typeof SNAPSHOT_KEYS)[number];

const SERVER_TYPE = {
  listeners: 'listener',
  routes: 'route',
  clusters: 'cluster',
  endpoints: 'endpoint',
} as const satisfies Record<SnapshotKey, string>;

export type ResourceJson = { [key: string]: unknown };
export type Snapshot = Readonly<Record<SnapshotKey, readonly ResourceJson[]>>;

function snapshotError(file: string, why: string): CliError {
  return new CliError(EXIT.USAGE, `snapshot ${file}: ${why}`);
}

/** The name the server keys a resource by: `name`, or `cluster_name` for endpoints. */
export function resourceName(key: SnapshotKey, json: ResourceJson): unknown {
  return key === 'endpoints' ? (json['cluster_name'] ?? json['clusterName']) : json['name'];
}

/** Parses and checks a snapshot; throws a CliError naming the file and the JSON path. */
export function parseSnapshot(text: string, file: string): Snapshot {
  let data: unknown;
  try {
    data = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    const first = ((e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '').replace(
      /:$/,
      '',
    );
    throw snapshotError(file, `cannot parse ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${first}`);
  }
  if (data === null || data === undefined) throw snapshotError(file, 'is empty');
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw snapshotError(file, `must be a mapping with keys ${SNAPSHOT_KEYS.join(', ')}`);
  }
  const record = data as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!(SNAPSHOT_KEYS as readonly string[]).includes(key)) {
      throw snapshotError(file, `unknown key "${key}" (expected ${SNAPSHOT_KEYS.join(', ')})`);
    }
  }
  const out = {} as Record<SnapshotKey, readonly ResourceJson[]>;
  for (const key of SNAPSHOT_KEYS) {
    const list = record[key] ?? [];
    if (!Array.isArray(list)) throw snapshotError(file, `${key} must be a list`);
    const seen = new Set<string>();
    list.forEach((item: unknown, i) => {
      const path = `${key}[${i}]`;
      if (typeof item !== 'object' || item === null || Array.isArray(item)) {
        throw snapshotError(file, `${path} must be a mapping (a resource in proto3 JSON)`);
      }
      const name = resourceName(key, item as ResourceJson);
      const nameField = key === 'endpoints' ? 'cluster_name' : 'name';
      if (typeof name !== 'string' || name === '') {
        throw snapshotError(file, `${path}.${nameField}: required`);
      }
      if (seen.has(name)) throw snapshotError(file, `${path}: duplicate ${nameField} "${name}"`);
      seen.add(name);
      try {
        toMessageBytes(resolveTypeUrl(SERVER_TYPE[key]), item, { path });
      } catch (e) {
        throw snapshotError(file, messageOf(e));
      }
    });
    out[key] = list as ResourceJson[];
  }
  return out;
}

export function readSnapshot(file: string): Snapshot {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : messageOf(e);
    throw snapshotError(file, `cannot read: ${why}`);
  }
  return parseSnapshot(text, file);
}

/** How many resources of each kind, e.g. `1 listener, 1 route, 5 clusters, 2 endpoints`. */
export function describeSnapshot(snapshot: Snapshot): string {
  const word = {
    listeners: 'listener',
    routes: 'route',
    clusters: 'cluster',
    endpoints: 'endpoints',
  };
  return (['listeners', 'routes', 'clusters', 'endpoints'] as const)
    .map((key) => {
      const n = snapshot[key].length;
      return `${n} ${key === 'endpoints' || n === 1 ? word[key] : key}`;
    })
    .join(', ');
}

/**
 * Serves a snapshot: pushes only the kinds that differ from `previous` (with none, every kind
 * that has resources), so clients see a new version only for what changed. Returns the kinds pushed.
 */
export function applySnapshot(
  server: ManagementServer,
  snapshot: Snapshot,
  previous?: Snapshot,
): SnapshotKey[] {
  const changed = SNAPSHOT_KEYS.filter((key) =>
    previous
      ? JSON.stringify(previous[key]) !== JSON.stringify(snapshot[key])
      : snapshot[key].length > 0,
  );
  for (const key of changed) server.setResources(SERVER_TYPE[key], snapshot[key]);
  return changed;
}
