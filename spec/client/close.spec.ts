// close(): the stream, timers and watches end, and the process can exit.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { type ClusterUpdate } from '../../lib';
import { edsCluster } from '../../lib/testing';
import { TEST_RESOURCE_TIMEOUT_MS } from '../helpers/constants';
import { ClientEvents } from '../helpers/client-events';
import { mockClock, realClock } from '../helpers/clock';
import { startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';
import { until } from '../helpers/wait';

describe('close', () => {
  let env: Env;
  afterEach(() => {
    realClock();
    return env?.close();
  });

  it('close ends the stream and watchers hear nothing more', async (t) => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    const missing = new RecordingWatcher<ClusterUpdate>();
    const events = new ClientEvents(env.client);
    // Mock timers from here: the does-not-exist timer of "missing" runs on the mock clock.
    const tick = mockClock(t);
    env.client.watchCluster('A', w);
    env.client.watchCluster('missing', missing);
    await w.next('changed');
    await events.request('naming "missing"', (r) => r.resourceNames.includes('missing'));
    env.client.close();
    env.client.close(); // idempotent
    await until('the stream to close', () => env.server.streamCount === 0);
    // With the stream gone no update can arrive; what could still reach the watchers is close()
    // itself (it notifies nobody) and the does-not-exist timer of "missing", which close()
    // stopped: run the clock far past it.
    tick(TEST_RESOURCE_TIMEOUT_MS * 10);
    w.expectNothingYet();
    missing.expectNothingYet();
    assert.throws(() => env.client.watchCluster('A', w), /closed/);
  });

  it('the process exits by itself after close', () => {
    const script = `
      const { XdsClient } = require('./dist/lib');
      const { ManagementServer, edsCluster } = require('./dist/lib/testing');
      (async () => {
        const server = await ManagementServer.start();
        server.setResources('cluster', [edsCluster('A')]);
        const client = new XdsClient({ bootstrap: server.bootstrap({ nodeId: 'exit' }) });
        await new Promise((resolve) => client.watchCluster('A', { onResourceChanged: resolve, onResourceError() {} }));
        client.watchCluster('never', { onResourceChanged() {}, onResourceError() {} });
        client.close();
        await server.close();
      })();
    `;
    const root = path.join(__dirname, '..', '..');
    const started = Date.now();
    const result = spawnSync(process.execPath, ['-e', script], {
      cwd: root,
      timeout: 10_000,
      encoding: 'utf8',
    });
    assert.equal(result.signal, null, 'the process had to be killed: something kept it alive');
    assert.equal(result.status, 0, result.stderr);
    assert.ok(Date.now() - started < 10_000);
  });
});
