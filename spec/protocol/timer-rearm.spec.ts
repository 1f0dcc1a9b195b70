// A new stream owes every resource with no value a fresh verdict (gRFC A57, as gRPC C-core
// does it): the does-not-exist timer is armed again on it, whatever the last stream said, so a
// watcher of a missing resource hears NOT_FOUND again once the server is back, not only the
// UNAVAILABLE of the outage.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, type ClusterUpdate } from '../../lib';
import { edsCluster } from '../../lib/testing';
import { EXPIRY_TIMEOUT_MS, TEST_BACKOFF } from '../helpers/constants';
import { startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

describe('does-not-exist timers on a new stream', () => {
  let env: Env;
  afterEach(() => env?.close());

  it('a resource with no value gets a fresh verdict on every new stream', async () => {
    env = await startEnv({ backoff: TEST_BACKOFF, resourceTimeoutMs: EXPIRY_TIMEOUT_MS });
    env.server.setResources('cluster', [edsCluster('present')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('missing', w);
    assert.equal((await w.next('error')).error.code, status.NOT_FOUND);

    // The server goes down: every new stream fails before any response.
    env.server.setStreamFault({ endBeforeResponseWith: { code: status.UNAVAILABLE } });
    env.server.endStreams(status.UNAVAILABLE, 'down');
    assert.equal((await w.next('error')).error.code, status.UNAVAILABLE);
    assert.equal(env.client.dump()[0]!.status, 'DOES_NOT_EXIST');

    // Back up, still without the resource: the watcher hears so again.
    env.server.setStreamFault(undefined);
    // (Streams that failed before the fault was lifted may still report UNAVAILABLE first.)
    let verdict = (await w.next('error')).error;
    for (let i = 0; i < 10 && verdict.code === status.UNAVAILABLE; i++) {
      verdict = (await w.next('error')).error;
    }
    assert.equal(verdict.code, status.NOT_FOUND);
    assert.match(verdict.message, /Cluster "missing" does not exist/);
    assert.equal(env.client.dump()[0]!.status, 'DOES_NOT_EXIST');
  });
});
