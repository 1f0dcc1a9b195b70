// gRFC A88's `resource_timer_is_transient_error` server feature: that server reports missing
// resources itself, so its does-not-exist timer means "slow", not "gone". On node:test's mock
// clock, as the other timer specs.
//
// 1. With the feature, a resource the server never sends is reported, when the timer fires,
//    as a resource error with code UNAVAILABLE naming the server, and the dump shows TIMEOUT;
//    a later arrival is still delivered (ACKED).
// 2. Without `resourceTimeoutMs`, that server's timer is 30 s (A88), the others' 15 s (A57).
// 3. Without the feature, the same timer is NOT_FOUND / DOES_NOT_EXIST (the A57 rule stays).
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, XdsClient, type ClusterUpdate } from '../../lib';
import { edsCluster, ManagementServer } from '../../lib/testing';
import { ClientEvents } from '../helpers/client-events';
import { mockClock, realClock } from '../helpers/clock';
import { TEST_RESOURCE_TIMEOUT_MS } from '../helpers/constants';
import { startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

const FEATURE = 'resource_timer_is_transient_error';
const naming = (name: string) => (r: { resourceNames: readonly string[] }) =>
  r.resourceNames.includes(name);

describe('resource_timer_is_transient_error (A88)', () => {
  let env: Env | undefined;
  afterEach(async () => {
    realClock();
    await env?.close();
    env = undefined;
  });

  it('timer fires as unavailable with cache state timeout and a late arrival still delivers', async (t) => {
    env = await startEnv({ serverFeatures: [FEATURE] });
    const events = new ClientEvents(env.client);
    const tick = mockClock(t);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('slow', w);
    await events.request('naming "slow"', naming('slow'));
    tick(TEST_RESOURCE_TIMEOUT_MS - 1);
    w.expectNothingYet();
    tick(1);
    const { error } = await w.next('error');
    assert.equal(error.code, status.UNAVAILABLE);
    assert.equal(error.resourceName, 'slow');
    assert.match(error.message, /Cluster "slow" not received from xDS server 127\.0\.0\.1:\d+/);
    assert.match(error.message, /resource_timer_is_transient_error/);
    const [entry] = env.client.dump();
    assert.equal(entry!.status, 'TIMEOUT');
    assert.equal(entry!.cached, false);
    assert.equal(entry!.error?.code, status.UNAVAILABLE);

    env.server.setResources('cluster', [edsCluster('slow')]);
    assert.equal((await w.next('changed')).resource.name, 'slow');
    assert.equal(env.client.dump()[0]!.status, 'ACKED');
    assert.equal(env.client.dump()[0]!.error, undefined);
  });

  it('the default timer is 30s on a server with the feature and 15s without', async (t) => {
    for (const features of [[FEATURE], []]) {
      const server = await ManagementServer.start();
      const client = new XdsClient({
        bootstrap: server.bootstrap({ nodeId: 'spec-node', serverFeatures: features }),
      });
      try {
        const events = new ClientEvents(client);
        const tick = mockClock(t);
        const w = new RecordingWatcher<ClusterUpdate>();
        client.watchCluster('missing', w);
        await events.request('naming "missing"', naming('missing'));
        const timeout = features.length > 0 ? 30_000 : 15_000;
        tick(timeout - 1);
        w.expectNothingYet();
        tick(1);
        const { error } = await w.next('error');
        assert.equal(error.code, features.length > 0 ? status.UNAVAILABLE : status.NOT_FOUND);
        assert.match(error.message, new RegExp(`within ${timeout} ms`));
      } finally {
        realClock();
        client.close();
        await server.close();
      }
    }
  });

  it('without the feature the timer still means does-not-exist', async (t) => {
    env = await startEnv({ serverFeatures: ['fail_on_data_errors'] });
    const events = new ClientEvents(env.client);
    const tick = mockClock(t);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('gone', w);
    await events.request('naming "gone"', naming('gone'));
    tick(TEST_RESOURCE_TIMEOUT_MS);
    const { error } = await w.next('error');
    assert.equal(error.code, status.NOT_FOUND);
    assert.equal(env.client.dump()[0]!.status, 'DOES_NOT_EXIST');
  });
});
