// api_type FILESYSTEM, through the public API with real files in a temp directory:
//
// 1. Each type's file (YAML or JSON, a DiscoveryResponse) is read when the type is first
//    watched; resources are delivered as from a server.
// 2. An update is an atomic rename into place (the protocol document's way); it is seen.
// 3. SotW deletion: a Cluster missing from the new file is deleted (NOT_FOUND).
// 4. A file that does not parse keeps the last good version and is reported as a NACK would be:
//    the nack event, the dump's error state, an ambient error; the next good file recovers.
// 5. An invalid resource is NACKed as over a stream (A46): ambient error, the cache kept.
// 6. A file missing at start is reported, and read when it is renamed into place.
// 7. A bad `paths` entry fails the client's construction, naming the field.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { stringify as stringifyYaml } from 'yaml';
import {
  status,
  XdsClient,
  type ClusterUpdate,
  type EndpointUpdate,
  type ListenerUpdate,
  type NackEvent,
} from '../../lib';
import { edsCluster, listener } from '../../lib/testing';
import { TEST_RESOURCE_TIMEOUT_MS } from '../helpers/constants';
import { RecordingWatcher } from '../helpers/recording-watcher';

const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';

describe('FILESYSTEM transport', () => {
  let dir: string;
  let client: XdsClient | undefined;
  let writes = 0;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'xds-files-'));
  });
  afterEach(() => {
    client?.close();
    client = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes beside the target, then renames into place: what the document recommends. */
  function install(file: string, text: string): void {
    const temp = join(dir, `.tmp-${++writes}`);
    writeFileSync(temp, text);
    renameSync(temp, join(dir, file));
  }

  const clustersJson = (clusters: object[], version = 'v1') =>
    JSON.stringify({
      version_info: version,
      resources: clusters.map((c) => ({
        '@type': CDS,
        ...c,
      })),
    });

  function startClient(paths: Record<string, string> = { cluster: 'clusters.json' }) {
    const absolute = Object.fromEntries(Object.entries(paths).map(([k, f]) => [k, join(dir, f)]));
    client = new XdsClient({
      bootstrap: {
        xds_servers: [{ api_type: 'FILESYSTEM', paths: absolute, refresh_delay: '0.1s' }],
        node: { id: 'file-node' },
      },
      resourceTimeoutMs: TEST_RESOURCE_TIMEOUT_MS,
    });
    return client;
  }

  it('files are read yaml and json and resources delivered', async () => {
    install('clusters.json', clustersJson([edsCluster('A')]));
    install(
      'listeners.yaml',
      stringifyYaml({ version_info: '7', resources: [{ '@type': LDS, ...listener('L', 'R') }] }),
    );
    const c = startClient({ cluster: 'clusters.json', listener: 'listeners.yaml' });
    const wc = new RecordingWatcher<ClusterUpdate>();
    const wl = new RecordingWatcher<ListenerUpdate>();
    c.watchCluster('A', wc);
    c.watchListener('L', wl);
    assert.equal((await wc.next('changed')).resource.name, 'A');
    assert.equal((await wl.next('changed')).resource.name, 'L');
    const dumped = c.dump().find((d) => d.name === 'L')!;
    assert.equal(dumped.version, '7');
    assert.equal(dumped.status, 'ACKED');
  });

  it('an atomic rename into place is an update and a missing cluster is deleted', async () => {
    install('clusters.json', clustersJson([edsCluster('A'), edsCluster('B')]));
    const c = startClient();
    const wa = new RecordingWatcher<ClusterUpdate>();
    const wb = new RecordingWatcher<ClusterUpdate>();
    c.watchCluster('A', wa);
    c.watchCluster('B', wb);
    await wa.next('changed');
    await wb.next('changed');
    install('clusters.json', clustersJson([edsCluster('A', { serviceName: 'a2' })], 'v2'));
    const updated = await wa.next('changed');
    assert.equal(updated.resource.type === 'EDS' && updated.resource.edsServiceName, 'a2');
    const gone = await wb.next('error');
    assert.equal(gone.error.code, status.NOT_FOUND);
  });

  it('a file that does not parse is reported as a nack and the last good version kept', async () => {
    install('clusters.json', clustersJson([edsCluster('A')]));
    const c = startClient();
    const nacks: NackEvent[] = [];
    c.on('nack', (event) => nacks.push(event));
    const w = new RecordingWatcher<ClusterUpdate>();
    c.watchCluster('A', w);
    await w.next('changed');
    install('clusters.json', '{"resources": [ {');
    const ambient = await w.next('ambient');
    assert.equal(ambient.error.code, status.INVALID_ARGUMENT);
    assert.match(ambient.error.message, /clusters\.json/);
    assert.equal(nacks.length, 1);
    assert.equal(nacks[0]!.typeUrl, CDS);
    assert.match(nacks[0]!.error, /clusters\.json/);
    const dumped = c.dump().find((d) => d.name === 'A')!;
    assert.equal(dumped.status, 'NACKED');
    assert.equal(dumped.cached, true, 'the last good version is kept');
    assert.match(dumped.error!.message, /clusters\.json/);
    // A good file again: delivered, the status ACKED.
    install('clusters.json', clustersJson([edsCluster('A', { serviceName: 'fixed' })], 'v3'));
    await w.next('changed');
    assert.equal(c.dump().find((d) => d.name === 'A')!.status, 'ACKED');
  });

  it('an invalid resource is nacked as over a stream keeping the cached one', async () => {
    install('clusters.json', clustersJson([edsCluster('A')]));
    const c = startClient();
    const w = new RecordingWatcher<ClusterUpdate>();
    c.watchCluster('A', w);
    await w.next('changed');
    install('clusters.json', clustersJson([{ name: 'A', type: 'STATIC' }], 'v2'));
    const ambient = await w.next('ambient');
    assert.match(ambient.error.message, /Cluster "A": type: /);
    assert.equal(c.dump().find((d) => d.name === 'A')!.cached, true);
  });

  it('a file missing at start is reported and read once renamed into place', async () => {
    const c = startClient();
    const w = new RecordingWatcher<ClusterUpdate>();
    c.watchCluster('A', w);
    const missing = await w.next('error');
    assert.match(missing.error.message, /cannot read: ENOENT/);
    install('clusters.json', clustersJson([edsCluster('A')]));
    assert.equal((await w.next('changed')).resource.name, 'A');
  });

  it('the example in examples filesystem serves a whole listener to endpoints tree', async () => {
    const exampleDir = join(__dirname, '..', '..', 'examples', 'filesystem');
    const bootstrap = JSON.parse(readFileSync(join(exampleDir, 'bootstrap.json'), 'utf8'));
    const server = bootstrap.xds_servers[0];
    // Its paths are relative to the working directory: the example's own, in docs/transports.md.
    for (const key of Object.keys(server.paths))
      server.paths[key] = join(exampleDir, server.paths[key]);
    client = new XdsClient({ bootstrap });
    const wl = new RecordingWatcher<ListenerUpdate>();
    const we = new RecordingWatcher<EndpointUpdate>();
    client.watchListener('echo.test', wl);
    client.watchEndpoints('echo', we);
    await wl.next('changed');
    const { resource } = await we.next('changed');
    const endpoint = resource.priorities[0]?.[0]?.endpoints[0];
    assert.equal(`${endpoint?.address}:${endpoint?.port}`, '127.0.0.1:50051');
  });

  it('a bad paths entry fails construction naming the field', () => {
    assert.throws(
      () =>
        new XdsClient({
          bootstrap: { xds_servers: [{ api_type: 'FILESYSTEM', paths: { cluster: 7 } }] },
        }),
      /xds_servers\[0\]\.paths\.cluster: must be a non-empty file path/,
    );
  });
});
