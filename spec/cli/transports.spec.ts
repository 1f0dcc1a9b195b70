// `xds-client watch` over the transports other than ADS (docs/transports.md): files, with
// `--delta` leaving a FILESYSTEM entry as it is, and REST-JSON polling of a real server.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ManagementServer, edsCluster } from '../../lib/testing';
import { ROOT, runCli, tempDir } from './helpers';

describe('xds-client watch on other transports', () => {
  const temp = tempDir();
  after(() => temp.remove());

  it('watches files, and --delta leaves a FILESYSTEM entry as it is', async () => {
    const example = join(ROOT, 'examples', 'filesystem');
    const file = join(temp.dir, 'files.json');
    const kinds = ['listener', 'route', 'cluster', 'endpoint'];
    const paths = Object.fromEntries(kinds.map((k) => [k, join(example, `${k}s.yaml`)]));
    writeFileSync(
      file,
      JSON.stringify({ xds_servers: [{ api_type: 'FILESYSTEM', paths }], node: { id: 'cli' } }),
    );
    const result = await runCli([
      'watch',
      '--bootstrap',
      file,
      '--delta',
      '--listener',
      'echo.test',
      '--once',
    ]);
    assert.equal(result.stderr, '');
    assert.equal(result.code, 0);
    assert.match(result.stdout, /echo\.test/);
  });

  it('watches over REST-JSON polling', async () => {
    const server = await ManagementServer.start();
    try {
      server.setResources('cluster', [edsCluster('A')]);
      const file = join(temp.dir, 'rest.json');
      writeFileSync(file, JSON.stringify(server.bootstrap({ apiType: 'REST' })));
      const result = await runCli(['watch', '--bootstrap', file, '--cluster', 'A', '--once']);
      assert.equal(result.stderr, '');
      assert.equal(result.code, 0);
      assert.match(result.stdout, /cluster A/i);
    } finally {
      await server.close();
    }
  });
});
