// `xds-client serve --files DIR`: the snapshot written out for the FILESYSTEM transport, with a
// bootstrap that reads it; a client on that bootstrap sees the snapshot, and a reload's change.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { XdsClient, type ClusterUpdate } from '../../lib';
import { RecordingWatcher } from '../helpers/recording-watcher';
import { RunningCli, tempDir } from './helpers';

describe('xds-client serve --files', () => {
  const temp = tempDir();
  after(() => temp.remove());

  it('writes the snapshot as files a FILESYSTEM client reads, and rewrites them on reload', async () => {
    const snapshot = join(temp.dir, 'snapshot.json');
    const cluster = (serviceName: string) => ({
      name: 'A',
      type: 'EDS',
      eds_cluster_config: { service_name: serviceName, eds_config: { ads: {} } },
    });
    const write = (serviceName: string) =>
      writeFileSync(snapshot, JSON.stringify({ clusters: [cluster(serviceName)] }));
    write('first');
    const files = join(temp.dir, 'files');
    const serve = new RunningCli(['serve', '--snapshot', snapshot, '--files', files, '--quiet']);
    let client: XdsClient | undefined;
    try {
      await serve.waitFor(/as files: +.*bootstrap\.json\)\n/);
      const bootstrap = JSON.parse(readFileSync(join(files, 'bootstrap.json'), 'utf8')) as object;
      client = new XdsClient({ bootstrap });
      const watcher = new RecordingWatcher<ClusterUpdate>();
      client.watchCluster('A', watcher);
      const first = await watcher.next('changed');
      assert.equal(first.resource.type === 'EDS' && first.resource.edsServiceName, 'first');
      write('second');
      await serve.waitFor(/reloaded .*clusters \(version 2\)/);
      const second = await watcher.next('changed');
      assert.equal(second.resource.type === 'EDS' && second.resource.edsServiceName, 'second');
    } finally {
      client?.close();
      await serve.stop();
    }
  });
});
