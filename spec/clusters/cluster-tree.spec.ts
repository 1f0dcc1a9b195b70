// The cluster tree (gRFC A37, the CDS policy's half), against the real management server.
//
// 1. Leaves in depth-first order, each at its earliest position; never a half-built list.
// 2. Clusters that leave the tree are unwatched; a cycle fails with "no leaf clusters" and
//    watches only the clusters on it.
// 3. MAX_AGGREGATE_CLUSTER_DEPTH counts clusters on a path, root included: 16 pass, 17 fail.
// 4. A missing or invalid cluster fails the tree with its path (A74's skip is an option);
//    transient errors fail it only before its first update.
// 5. Two trees that share a cluster make one subscription.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, type ClusterUpdate } from '../../lib';
import {
  MAX_AGGREGATE_CLUSTER_DEPTH,
  watchClusterTree,
  type ClusterTreeUpdate,
  type DiscoveryMechanism,
} from '../../lib';
import { aggregateCluster, edsCluster, logicalDnsCluster } from '../../lib/testing';
import { EXPIRY_TIMEOUT_MS, TEST_BACKOFF } from '../helpers/constants';
import { expireMissing, mockClock, realClock } from '../helpers/clock';
import { settled, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';
import { waitForSubscription } from './helpers';

const leaves = (update: ClusterTreeUpdate) => update.mechanisms.map((m) => m.cluster);

/** c1 -> c2 -> ... -> c<n>: n-1 aggregates and an EDS leaf. */
function chain(n: number) {
  const names = Array.from({ length: n }, (_, i) => `c${i + 1}`);
  return names.map((name, i) =>
    i + 1 < n ? aggregateCluster(name, [names[i + 1]!]) : edsCluster(name),
  );
}

describe('cluster tree', () => {
  let env: Env;
  afterEach(() => {
    realClock();
    return env?.close();
  });

  it('a single eds cluster is one mechanism reported asynchronously', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A', { serviceName: 'A-eds' })]);
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'A', rec);
    assert.equal(rec.events.length, 0, 'called inside watchClusterTree()');
    const update = await rec.update();
    const a = update.clusters.get('A')!;
    const want: DiscoveryMechanism = {
      cluster: 'A',
      type: 'EDS',
      edsServiceName: 'A-eds',
      maxConcurrentRequests: 1024,
      lbPolicy: a.lbPolicy,
    };
    assert.deepEqual(update.mechanisms, [want]);
    assert.deepEqual([...update.clusters.keys()], ['A']);
    assert.ok(Object.isFrozen(update.mechanisms) && Object.isFrozen(update.mechanisms[0]));
  });

  it('a logical dns leaf carries its host and port', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [logicalDnsCluster('E', 'dns.example', 8080)]);
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'E', rec);
    const [mechanism] = (await rec.update()).mechanisms;
    assert.equal(mechanism!.type, 'LOGICAL_DNS');
    assert.equal(mechanism!.dnsHostname, 'dns.example:8080');
    assert.equal('edsServiceName' in mechanism!, false, 'unset optional keys are absent');
  });

  it('a diamond keeps each shared cluster at its earliest position', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [
      aggregateCluster('A', ['B', 'C']),
      aggregateCluster('B', ['D', 'E']),
      aggregateCluster('C', ['E', 'D', 'F']),
      edsCluster('D'),
      edsCluster('E'),
      edsCluster('F'),
    ]);
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'A', rec);
    const update = await rec.update();
    assert.deepEqual(leaves(update), ['D', 'E', 'F']);
    assert.deepEqual([...update.clusters.keys()], ['A', 'B', 'D', 'E', 'C', 'F']);
    await rec.expectNothingUntil(settled(env.server));
  });

  it('a tree that grows and shrinks unwatches the clusters that left', async () => {
    env = await startEnv();
    const { server } = env;
    server.setResources('cluster', [
      aggregateCluster('A', ['B']),
      edsCluster('B'),
      edsCluster('C'),
    ]);
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'A', rec);
    assert.deepEqual(leaves(await rec.update()), ['B']);
    await waitForSubscription(server, ['A', 'B']);

    server.setResource('cluster', aggregateCluster('A', ['B', 'C']));
    assert.deepEqual(leaves(await rec.update()), ['B', 'C']);
    await waitForSubscription(server, ['A', 'B', 'C']);

    server.setResource('cluster', aggregateCluster('A', ['C']));
    assert.deepEqual(leaves(await rec.update()), ['C']);
    await waitForSubscription(server, ['A', 'C']);

    server.setResource('cluster', edsCluster('A'));
    assert.deepEqual(leaves(await rec.update()), ['A']);
    await waitForSubscription(server, ['A']);
    await rec.expectNothingUntil(settled(server));
  });

  it('the list is never half-built while a child is missing', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [aggregateCluster('A', ['B', 'C']), edsCluster('B')]);
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'A', rec);
    await waitForSubscription(env.server, ['A', 'B', 'C']);
    // B has arrived and C has not (its does-not-exist timer is still running).
    await rec.expectNothingUntil(settled(env.server));
    env.server.setResource('cluster', edsCluster('C'));
    assert.deepEqual(leaves(await rec.update()), ['B', 'C']);
  });

  it('a cycle fails with no leaf clusters and watches only its clusters', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [
      aggregateCluster('A', ['B']),
      aggregateCluster('B', ['A']),
    ]);
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'A', rec);
    const error = await rec.error();
    assert.equal(error.code, status.UNAVAILABLE);
    assert.equal(
      error.message,
      'A: aggregate cluster graph has no leaf clusters (cycle: A -> B -> A)',
    );
    await waitForSubscription(env.server, ['A', 'B']);
    await rec.expectNothingUntil(settled(env.server));

    env.server.setResource('cluster', edsCluster('B'));
    assert.deepEqual(leaves(await rec.update()), ['B']);
  });

  it('a cycle beside a leaf yields the leaf', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [
      aggregateCluster('A', ['B', 'C']),
      aggregateCluster('B', ['A', 'B']),
      edsCluster('C'),
    ]);
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'A', rec);
    assert.deepEqual(leaves(await rec.update()), ['C']);
  });

  it('a chain of 16 clusters is at the depth limit and works', async () => {
    assert.equal(MAX_AGGREGATE_CLUSTER_DEPTH, 16);
    env = await startEnv();
    env.server.setResources('cluster', chain(MAX_AGGREGATE_CLUSTER_DEPTH));
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'c1', rec);
    const update = await rec.update();
    assert.deepEqual(leaves(update), [`c${MAX_AGGREGATE_CLUSTER_DEPTH}`]);
    assert.equal(update.clusters.size, MAX_AGGREGATE_CLUSTER_DEPTH);
  });

  it('a chain of 17 clusters exceeds the max depth', async () => {
    env = await startEnv();
    const n = MAX_AGGREGATE_CLUSTER_DEPTH + 1;
    env.server.setResources('cluster', chain(n));
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'c1', rec);
    const error = await rec.error();
    assert.equal(error.code, status.UNAVAILABLE);
    const path = Array.from({ length: n }, (_, i) => `c${i + 1}`).join(' -> ');
    assert.equal(error.message, `${path}: aggregate cluster graph exceeds max depth (16)`);
    // The cluster past the limit is never subscribed.
    await waitForSubscription(env.server, path.split(' -> ').slice(0, -1));

    // Cut the chain to the limit: it works again.
    env.server.setResource('cluster', edsCluster(`c${n - 1}`));
    assert.deepEqual(leaves(await rec.update()), [`c${n - 1}`]);
  });

  it('a leaf that does not exist fails the tree with its path', async (t) => {
    env = await startEnv();
    env.server.setResources('cluster', [
      aggregateCluster('A', ['B', 'C']),
      edsCluster('B'),
      aggregateCluster('C', ['D', 'E']),
      edsCluster('E'),
    ]);
    // Only D's timer may fire, whatever the load: on the mock clock, once the rest is cached.
    const tick = mockClock(t);
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'A', rec);
    await expireMissing(env.server, tick, ['D']);
    const error = await rec.error();
    assert.equal(error.code, status.UNAVAILABLE);
    assert.equal(error.reason, 'A -> C -> D: cluster "D" does not exist');
    assert.equal(error.resourceName, 'D');

    env.server.setResource('cluster', edsCluster('D'));
    assert.deepEqual(leaves(await rec.update()), ['B', 'D', 'E']);

    // A deletion after the first update fails the tree too, and the next good tree is reported.
    env.server.removeResource('cluster', 'E');
    assert.equal((await rec.error()).reason, 'A -> C -> E: cluster "E" does not exist');
    env.server.setResource('cluster', edsCluster('E'));
    assert.deepEqual(leaves(await rec.update()), ['B', 'D', 'E']);
  });

  it('a root that does not exist fails the tree', async () => {
    env = await startEnv({ resourceTimeoutMs: EXPIRY_TIMEOUT_MS });
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'A', rec);
    assert.equal((await rec.error()).reason, 'A: cluster "A" does not exist');
  });

  it('skip missing children leaves out missing non-root clusters', async (t) => {
    env = await startEnv();
    env.server.setResources('cluster', [
      aggregateCluster('A', ['B', 'C']),
      edsCluster('B'),
      aggregateCluster('C', ['D', 'E']),
      edsCluster('E'),
      aggregateCluster('X', ['Y']),
    ]);
    // Three trees at once: each waits for a does-not-exist timer (D, Y, Z), side by side, on
    // the mock clock, so that only theirs may fire, whatever the load.
    const tick = mockClock(t);
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    const onlyMissing = new RecordingWatcher<ClusterTreeUpdate>();
    const missingRoot = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'A', rec, { skipMissingChildren: true });
    watchClusterTree(env.client, 'X', onlyMissing, { skipMissingChildren: true });
    watchClusterTree(env.client, 'Z', missingRoot, { skipMissingChildren: true });
    await expireMissing(env.server, tick, ['D', 'Y', 'Z']);
    // D is subscribed and waited for (the timer), then left out.
    const update = await rec.update();
    assert.deepEqual(leaves(update), ['B', 'E']);
    assert.equal(update.clusters.has('D'), false);
    assert.equal(
      (await onlyMissing.error()).message,
      'X: aggregate cluster graph has no leaf clusters',
    );
    assert.equal((await missingRoot.error()).reason, 'Z: cluster "Z" does not exist');
  });

  it('an invalid child with nothing cached fails the tree with its path', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [
      aggregateCluster('A', ['B']),
      { name: 'B', type: 'STATIC' },
    ]);
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'A', rec);
    const error = await rec.error();
    assert.equal(error.code, status.UNAVAILABLE);
    assert.match(error.reason, /^A -> B: cluster "B" is invalid: .+/);
  });

  it('a transient error fails the tree only before its first update', async () => {
    env = await startEnv({ backoff: TEST_BACKOFF });
    const { server } = env;
    server.setResources('cluster', [aggregateCluster('A', ['B']), edsCluster('B')]);
    server.setStreamFault({ endBeforeResponseWith: { code: status.UNAVAILABLE } });
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'A', rec);
    const error = await rec.error();
    assert.equal(error.code, status.UNAVAILABLE);
    assert.match(error.reason, /^A: cluster "A" is unavailable: /);

    server.setStreamFault(undefined);
    const first = await rec.update();
    assert.deepEqual(leaves(first), ['B']);

    // A NACK of A and a server that fails streams again: both ambient now, and ignored.
    server.setResource('cluster', { name: 'A', type: 'STATIC' });
    await server.waitForRequest((r) => r.errorDetail !== undefined);
    const opened = server.streamsOpened;
    server.setStreamFault({ endBeforeResponseWith: { code: status.UNAVAILABLE } });
    server.endStreams(status.UNAVAILABLE);
    // The client opens stream opened+2 only after it has handled the failure of opened+1.
    await server.waitForStreams(opened + 2);
    rec.expectNothingYet();
  });

  it('two trees sharing a cluster make one subscription', async () => {
    env = await startEnv();
    const { server } = env;
    server.setResources('cluster', [
      aggregateCluster('A', ['B', 'C']),
      edsCluster('B'),
      edsCluster('C'),
    ]);
    const one = new RecordingWatcher<ClusterTreeUpdate>();
    const two = new RecordingWatcher<ClusterTreeUpdate>();
    const first = watchClusterTree(env.client, 'A', one);
    const second = watchClusterTree(env.client, 'C', two);
    const [a, c] = [await one.update(), await two.update()];
    assert.deepEqual(leaves(a), ['B', 'C']);
    assert.deepEqual(leaves(c), ['C']);
    assert.equal(a.mechanisms[1], c.mechanisms[0], 'one shared, frozen cluster update');
    await waitForSubscription(server, ['A', 'B', 'C']);
    for (const request of server.requests) {
      assert.equal(new Set(request.resourceNames).size, request.resourceNames.length);
    }
    assert.equal(server.streamsOpened, 1);

    first.cancel();
    await waitForSubscription(server, ['C']);
    second.cancel();
    await waitForSubscription(server, []);
  });

  it('after cancel nothing is reported and nothing is watched', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [aggregateCluster('A', ['B']), edsCluster('B')]);
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    const tree = watchClusterTree(env.client, 'A', rec);
    // A second tree on the same root keeps the client subscribed, so the change below does
    // reach the client: only the cancel can keep it from the first tree.
    const other = new RecordingWatcher<ClusterTreeUpdate>();
    const otherTree = watchClusterTree(env.client, 'A', other);
    await rec.update();
    await other.update();
    tree.cancel();
    tree.cancel();
    env.server.setResources('cluster', [
      aggregateCluster('A', ['B', 'C']),
      edsCluster('B'),
      edsCluster('C'),
    ]);
    const changed = await other.update();
    assert.ok(changed.clusters.has('C'), 'the change reached the client');
    rec.expectNothingYet();
    otherTree.cancel();
    await waitForSubscription(env.server, []);
    rec.expectNothingYet();
  });

  it("a tree's cancel works called off its handle", async () => {
    env = await startEnv();
    env.server.setResources('cluster', [aggregateCluster('A', ['B']), edsCluster('B')]);
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    const { cancel } = watchClusterTree(env.client, 'A', rec);
    await rec.update();
    cancel();
    await waitForSubscription(env.server, []);
    rec.expectNothingYet();
  });

  it('a closed client is an error reported later not a throw', async () => {
    env = await startEnv();
    const client = env.newClient();
    client.close();
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(client, 'A', rec);
    assert.equal(rec.events.length, 0);
    const error = await rec.error();
    assert.equal(error.code, status.UNAVAILABLE);
    assert.match(error.message, /^A: cluster "A" failed: XdsClient is closed/);
  });

  it('a listener that throws does not stop the tree', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('A')]);
    const seen: ClusterUpdate[] = [];
    watchClusterTree(env.client, 'A', {
      onUpdate(update) {
        seen.push(update.clusters.get('A')!);
        throw new Error('listener bug (expected in this spec)');
      },
      onError() {},
    });
    const rec = new RecordingWatcher<ClusterTreeUpdate>();
    watchClusterTree(env.client, 'A', rec);
    await rec.update();
    env.server.setResource('cluster', edsCluster('A', { serviceName: 'other' }));
    await rec.update();
    assert.equal(seen.length, 2);
  });
});
