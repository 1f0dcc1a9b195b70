// `serve --files DIR`: the snapshot written out for the FILESYSTEM transport (docs/transports.md)
// — one DiscoveryResponse per type in proto3 JSON, and a bootstrap that reads them — rewritten
// on every reload by writing beside and renaming into place, as the protocol document advises,
// so a client watching the files never reads half of one.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { resolveTypeUrl } from '../testing/resource-types';
import { SNAPSHOT_KEYS, type Snapshot, type SnapshotKey } from './snapshot';

const PATH_KEYS = {
  listeners: 'listener',
  routes: 'route',
  clusters: 'cluster',
  endpoints: 'endpoint',
} as const satisfies Record<SnapshotKey, string>;

/** Writes the bootstrap once; the type files with `writeSnapshotFiles`. Returns its path. */
export function writeFilesBootstrap(dir: string, nodeId: string): string {
  const root = resolve(dir);
  mkdirSync(root, { recursive: true });
  const paths = Object.fromEntries(
    SNAPSHOT_KEYS.map((key) => [PATH_KEYS[key], join(root, `${key}.json`)]),
  );
  const file = join(root, 'bootstrap.json');
  replace(
    file,
    JSON.stringify(
      { xds_servers: [{ api_type: 'FILESYSTEM', paths }], node: { id: nodeId } },
      null,
      2,
    ),
  );
  return file;
}

/** Writes the files of `keys` (default every kind), each with its version. */
export function writeSnapshotFiles(
  dir: string,
  snapshot: Snapshot,
  versions: ReadonlyMap<string, number>,
  keys: readonly SnapshotKey[] = SNAPSHOT_KEYS,
): void {
  const root = resolve(dir);
  for (const key of keys) {
    const typeUrl = resolveTypeUrl(PATH_KEYS[key]);
    const response = {
      version_info: String(versions.get(key) ?? 0),
      type_url: typeUrl,
      resources: snapshot[key].map((resource) => ({ '@type': typeUrl, ...resource })),
    };
    replace(join(root, `${key}.json`), `${JSON.stringify(response, null, 2)}\n`);
  }
}

function replace(file: string, text: string): void {
  const next = `${file}.next`;
  writeFileSync(next, text);
  renameSync(next, file);
}
