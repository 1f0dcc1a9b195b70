// The command's protocol log on an incremental (delta) stream: SUBSCRIBE, UNSUBSCRIBE and
// REMOVED lines beside the ACKs; `watch --delta` (or a bootstrap's api_type) selects delta.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { XdsClient, type ClusterUpdate } from '../../lib';
import { palette } from '../../lib/cli/colors';
import { logProtocol } from '../../lib/cli/protocol-log';
import { edsCluster, ManagementServer } from '../../lib/testing';
import { settled } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';
import { until } from '../helpers/wait';
import { runCli } from './helpers';

let server: ManagementServer;
before(async () => {
  server = await ManagementServer.start();
  server.setResources('cluster', [edsCluster('B'), edsCluster('D')]);
});
after(() => server.close());

describe('protocol log on delta', () => {
  it('watch delta logs subscribe ack and removed lines', async () => {
    const result = await runCli([
      'watch',
      '--server',
      server.address,
      '--node-id',
      'cli-delta',
      '--delta',
      '-v',
      '--once',
      '--cluster',
      'B',
      '--cluster',
      'nope',
    ]);
    assert.equal(result.code, 1, 'nope does not exist');
    assert.match(result.stdout, /→ SUBSCRIBE CDS \[B, nope\]/);
    assert.match(result.stdout, /← REMOVED {2}CDS \[nope\]/);
    assert.doesNotMatch(result.stdout, /REQUEST/, 'no SotW request line');
    assert.ok(server.deltaRequests.some((r) => r.node?.id === 'cli-delta'));
  });

  it('logs an unsubscribe when a watch ends', async () => {
    const lines: string[] = [];
    const client = new XdsClient({
      bootstrap: server.bootstrap({ apiType: 'AGGREGATED_DELTA_GRPC' }),
    });
    try {
      logProtocol(client, palette(false), (line) => lines.push(line), { responses: true });
      const b = new RecordingWatcher<ClusterUpdate>();
      const d = new RecordingWatcher<ClusterUpdate>();
      const handle = client.watchCluster('B', b);
      client.watchCluster('D', d);
      await b.next('changed');
      await d.next('changed');
      await settled(server);
      handle.cancel();
      await until('an UNSUBSCRIBE line', () => lines.some((l) => l.includes('UNSUBSCRIBE')));
      assert.ok(lines.includes('→ UNSUBSCRIBE CDS [B]'), lines.join('\n'));
      assert.ok(
        lines.some((l) => /^✓ ACK +CDS version \d+ nonce \d+$/.test(l)),
        lines.join('\n'),
      );
    } finally {
      client.close();
    }
  });

  it('delta needs a server or bootstrap file', async () => {
    const result = await runCli(['watch', '--delta', '--cluster', 'B', '--once'], {
      env: { GRPC_XDS_BOOTSTRAP_CONFIG: JSON.stringify(server.bootstrap()) },
    });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--delta needs --server HOST:PORT or --bootstrap FILE/);
  });
});
