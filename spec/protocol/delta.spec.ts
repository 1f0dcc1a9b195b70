// Incremental (delta) ADS: the wire rules of DeltaAggregatedResources, one spec each, through
// the public API against ManagementServer over a real grpc-js delta stream.
//
// 1. The first request of a stream subscribes every watched name, carries the node (only it),
//    and lists the cached resources' versions in initial_resource_versions.
// 2. Later requests carry only the names subscribed and unsubscribed since, one per type per tick.
// 3. Versions are per resource; system_version_info is kept for the dump.
// 4. removed_resources deletes, whatever the type; a removed name never cached does not exist.
// 5. ACK: the response's nonce, no error_detail. NACK: error_detail naming each bad resource
//    with its field path, sent once.
// 6. Resources nobody subscribed to are ignored.
// 7. Reconnect (A57): a stream that ends after a response reconnects with backoff, notifying
//    nobody; one that fails before any response is UNAVAILABLE for every watcher.
// 8. The does-not-exist timer (A57) still runs against a server that says nothing.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, type ClusterUpdate, type EndpointUpdate } from '../../lib';
import { edsCluster, endpoints, toMessageBytes } from '../../lib/testing';
import { ClientEvents } from '../helpers/client-events';
import { mockClock, realClock } from '../helpers/clock';
import { TEST_BACKOFF, TEST_RESOURCE_TIMEOUT_MS } from '../helpers/constants';
import { CDS, EDS, settled, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

const DELTA = 'AGGREGATED_DELTA_GRPC' as const;

const edsServiceName = (cluster: ClusterUpdate) =>
  cluster.type === 'EDS' ? cluster.edsServiceName : undefined;

describe('delta ADS', () => {
  let env: Env;
  afterEach(() => {
    realClock();
    return env?.close();
  });

  async function watchClusters(...names: string[]) {
    const watchers = names.map(() => new RecordingWatcher<ClusterUpdate>());
    const handles = names.map((name, i) => env.client.watchCluster(name, watchers[i]!));
    return { watchers, handles };
  }

  it('delta first request subscribes every name with the node once', async () => {
    env = await startEnv({ apiType: DELTA });
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
    const { watchers } = await watchClusters('A', 'B');
    for (const w of watchers) await w.next('changed');
    await settled(env.server);
    assert.equal(env.server.requests.length, 0, 'no SotW request at all');
    const [first, ack] = env.server.deltaRequests;
    assert.equal(first!.typeUrl, CDS);
    assert.deepEqual([...first!.resourceNamesSubscribe].sort(), ['A', 'B']);
    assert.deepEqual(first!.resourceNamesUnsubscribe, []);
    assert.deepEqual(first!.initialResourceVersions, {});
    assert.equal(first!.responseNonce, '');
    assert.equal(first!.node?.id, 'spec-node');
    // The ACK: nothing to subscribe again, and no node.
    assert.equal(ack!.node, undefined);
    assert.deepEqual(ack!.resourceNamesSubscribe, []);
    assert.equal(env.server.deltaRequests.length, 2);
  });

  it('delta later requests carry only changes coalesced per tick', async () => {
    env = await startEnv({ apiType: DELTA });
    env.server.setResources(
      'cluster',
      ['A', 'B', 'C', 'D'].map((n) => edsCluster(n)),
    );
    const { watchers, handles } = await watchClusters('A', 'B');
    for (const w of watchers) await w.next('changed');
    await settled(env.server);
    const before = env.server.deltaRequests.length;
    // One tick: two new watches and a cancel make one request.
    handles[0]!.cancel();
    const more = await watchClusters('C', 'D');
    for (const w of more.watchers) await w.next('changed');
    await settled(env.server);
    const change = env.server.deltaRequests[before]!;
    assert.deepEqual([...change.resourceNamesSubscribe].sort(), ['C', 'D']);
    assert.deepEqual(change.resourceNamesUnsubscribe, ['A']);
    assert.deepEqual(change.initialResourceVersions, {});
    assert.equal(change.responseNonce, '', 'a subscription change is no ACK');
    // The server answered with C and D only: the ACK of that carries nothing else.
    const response = env.server.responses.at(-1)!;
    assert.deepEqual([...response.resourceNames].sort(), ['C', 'D']);
    const ack = env.server.deltaRequests.at(-1)!;
    assert.equal(ack.responseNonce, response.nonce);
    assert.deepEqual(ack.resourceNamesSubscribe, []);
    assert.deepEqual(ack.resourceNamesUnsubscribe, []);
  });

  it('delta reconnect resubscribes with initial resource versions', async () => {
    env = await startEnv({ apiType: DELTA, backoff: TEST_BACKOFF });
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
    const { watchers } = await watchClusters('A', 'B', 'missing');
    for (const w of watchers.slice(0, 2)) await w.next('changed');
    await watchers[2]!.next('error');
    await settled(env.server);
    const versions = Object.fromEntries(
      env.client
        .dump()
        .filter((d) => d.cached)
        .map((d) => [d.name, d.version]),
    );
    const before = env.server.deltaRequests.length;
    env.server.endStreams(status.UNAVAILABLE);
    const first = await env.server.waitForDeltaRequest((r) => r.streamId === 2, {
      after: before,
    });
    assert.deepEqual([...first.resourceNamesSubscribe].sort(), ['A', 'B', 'missing']);
    assert.deepEqual(first.initialResourceVersions, versions);
    assert.equal(first.node?.id, 'spec-node', 'the node again, on the new stream');
    // A stream that ended after a response is normal: nobody hears of it.
    await settled(env.server);
    for (const w of watchers.slice(0, 2)) w.expectNothingYet();
    // The server sent nothing of what the client holds: only that "missing" is still missing.
    const response = env.server.responses.at(-1)!;
    assert.equal(response.streamId, 2);
    assert.deepEqual(response.resourceNames, []);
    assert.deepEqual(response.removedResources, ['missing']);
  });

  it('delta versions are per resource and system version info is dumped', async () => {
    env = await startEnv({ apiType: DELTA });
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
    const { watchers } = await watchClusters('A', 'B');
    for (const w of watchers) await w.next('changed');
    await settled(env.server); // the change below is pushed, not the answer to an ACK
    env.server.setResource('cluster', edsCluster('B', { serviceName: 'b2' }));
    const b = await watchers[1]!.next('changed');
    assert.equal(edsServiceName(b.resource), 'b2');
    await settled(env.server);
    const response = env.server.responses.at(-1)!;
    assert.deepEqual(response.resourceNames, ['B'], 'only the changed cluster is sent');
    const dump = new Map(env.client.dump().map((d) => [d.name, d]));
    assert.equal(dump.get('A')!.version, '1');
    assert.equal(dump.get('B')!.version, '2');
    assert.equal(dump.get('B')!.systemVersionInfo, response.versionInfo);
    assert.equal(dump.get('A')!.status, 'ACKED');
    watchers[0]!.expectNothingYet();
  });

  it('delta removed resources deletes any type', async () => {
    env = await startEnv({ apiType: DELTA });
    env.server.setResources('cluster', [edsCluster('A')]);
    env.server.setResources('endpoint', [endpoints('A', [{ addresses: ['10.0.0.1:80'] }])]);
    const cluster = new RecordingWatcher<ClusterUpdate>();
    const eds = new RecordingWatcher<EndpointUpdate>();
    env.client.watchCluster('A', cluster);
    env.client.watchEndpoints('A', eds);
    await cluster.next('changed');
    await eds.next('changed');
    // SotW has no way to delete an EDS resource; delta says so explicitly.
    env.server.setResources('endpoint', []);
    const gone = await eds.next('error');
    assert.equal(gone.error.code, status.NOT_FOUND);
    assert.match(gone.error.message, /deleted by the xDS server/);
    env.server.removeResource('cluster', 'A');
    assert.equal((await cluster.next('error')).error.code, status.NOT_FOUND);
    await settled(env.server);
    for (const d of env.client.dump()) {
      assert.equal(d.status, 'DOES_NOT_EXIST');
      assert.equal(d.cached, false);
    }
  });

  it('delta removed name never cached does not exist without waiting for the timer', async () => {
    // A timer that would outlast the spec: only removed_resources can say NOT_FOUND in time.
    env = await startEnv({ apiType: DELTA, resourceTimeoutMs: 60_000 });
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('nowhere', w);
    const error = await w.next('error');
    assert.equal(error.error.code, status.NOT_FOUND);
    assert.match(error.error.message, /removed by the xDS server/);
    // It may still come into being.
    env.server.setResource('cluster', edsCluster('nowhere'));
    await w.next('changed');
  });

  it('delta ack is the nonce without error detail', async () => {
    env = await startEnv({ apiType: DELTA });
    env.server.setResources('cluster', [edsCluster('A')]);
    const { watchers } = await watchClusters('A');
    await watchers[0]!.next('changed');
    const response = env.server.responses.at(-1)!;
    const ack = await env.server.waitForDeltaRequest((r) => r.responseNonce === response.nonce);
    assert.equal(ack.errorDetail, undefined);
    assert.equal(ack.typeUrl, CDS);
  });

  it('delta nack names each bad resource with its field path once', async () => {
    env = await startEnv({ apiType: DELTA });
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
    const { watchers } = await watchClusters('A', 'B', 'C');
    for (const w of watchers.slice(0, 2)) await w.next('changed');
    assert.equal((await watchers[2]!.next('error')).error.code, status.NOT_FOUND);
    await settled(env.server);
    const bytes = (json: object) => ({ typeUrl: CDS, value: toMessageBytes(CDS, json) });
    const [nonce] = env.server.sendRawDelta({
      typeUrl: CDS,
      resources: [
        { name: 'A', version: 'bad', resource: bytes({ name: 'A', type: 'STATIC' }) },
        {
          name: 'B',
          version: 'b2',
          resource: bytes({
            name: 'B',
            type: 'EDS',
            eds_cluster_config: { service_name: 'b2', eds_config: { ads: {} } },
          }),
        },
        { name: 'C', version: 'bad', resource: bytes({ name: 'C', type: 'STATIC' }) },
      ],
    });
    // A46: the valid one applies; the bad ones keep what is cached or fail.
    assert.equal((await watchers[0]!.next('ambient')).error.code, status.INVALID_ARGUMENT);
    assert.equal(edsServiceName((await watchers[1]!.next('changed')).resource), 'b2');
    assert.equal((await watchers[2]!.next('error')).error.code, status.INVALID_ARGUMENT);
    const nack = await env.server.waitForDeltaRequest((r) => r.responseNonce === nonce);
    assert.equal(nack.errorDetail?.code, status.INVALID_ARGUMENT);
    assert.match(nack.errorDetail!.message, /resource index 0: Cluster "A": type: /);
    assert.match(nack.errorDetail!.message, /resource index 2: Cluster "C": type: /);
    assert.doesNotMatch(nack.errorDetail!.message, /Cluster "B"/);
    const dump = new Map(env.client.dump().map((d) => [d.name, d]));
    assert.equal(dump.get('A')!.status, 'NACKED');
    assert.equal(dump.get('A')!.version, '1', 'the good version stays');
    assert.equal(dump.get('A')!.failedVersion, 'bad');
    assert.equal(dump.get('B')!.version, 'b2');
    // Sent once: the next request (a new subscription) carries no error.
    const after = env.server.deltaRequests.length;
    env.client.watchCluster('D', new RecordingWatcher<ClusterUpdate>());
    const next = await env.server.waitForDeltaRequest(() => true, { after });
    assert.deepEqual(next.resourceNamesSubscribe, ['D']);
    assert.equal(next.errorDetail, undefined);
    assert.equal(next.responseNonce, '');
  });

  it('delta nacks a name both updated and removed', async () => {
    env = await startEnv({ apiType: DELTA });
    env.server.setResources('cluster', [edsCluster('A')]);
    const { watchers } = await watchClusters('A');
    await watchers[0]!.next('changed');
    await settled(env.server);
    const value = toMessageBytes(CDS, edsCluster('A', { serviceName: 'x' }));
    const [nonce] = env.server.sendRawDelta({
      typeUrl: CDS,
      resources: [{ name: 'A', version: '9', resource: { typeUrl: CDS, value } }],
      removedResources: ['A'],
    });
    const nack = await env.server.waitForDeltaRequest((r) => r.responseNonce === nonce);
    assert.match(
      nack.errorDetail!.message,
      /removed_resources\[0\]: Cluster "A": both updated and removed/,
    );
  });

  it('delta ignores resources nobody subscribed to', async () => {
    env = await startEnv({ apiType: DELTA });
    env.server.setResources('cluster', [edsCluster('A')]);
    const { watchers } = await watchClusters('A');
    await watchers[0]!.next('changed');
    await settled(env.server);
    const value = toMessageBytes(CDS, { name: 'X', type: 'STATIC' });
    const [nonce] = env.server.sendRawDelta({
      typeUrl: CDS,
      resources: [{ name: 'X', version: '1', resource: { typeUrl: CDS, value } }],
      removedResources: ['Y'],
    });
    const ack = await env.server.waitForDeltaRequest((r) => r.responseNonce === nonce);
    assert.equal(ack.errorDetail, undefined, 'not even decoded, so not NACKed');
    assert.deepEqual(
      env.client.dump().map((d) => d.name),
      ['A'],
    );
    watchers[0]!.expectNothingYet();
  });

  it('delta stream failing before any response is unavailable and retried', async () => {
    env = await startEnv({ apiType: DELTA, backoff: TEST_BACKOFF });
    env.server.setStreamFault({ endBeforeResponseWith: { code: status.UNAVAILABLE } });
    const w = new RecordingWatcher<EndpointUpdate>();
    env.client.watchEndpoints('E', w);
    const error = await w.next('error');
    assert.equal(error.error.code, status.UNAVAILABLE);
    env.server.setStreamFault(undefined);
    env.server.setResources('endpoint', [endpoints('E', [{ addresses: ['10.0.0.2:80'] }])]);
    await w.next('changed');
    assert.ok(env.server.streamsOpened >= 2);
    assert.equal(env.server.deltaRequests.at(-1)!.typeUrl, EDS);
  });

  it('delta does not exist timer runs against a server that says nothing', async (t) => {
    env = await startEnv({ apiType: DELTA });
    env.server.holdResponses('cluster');
    const events = new ClientEvents(env.client);
    const tick = mockClock(t);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('late', w);
    await events.request('subscribing "late"', (r) => r.resourceNames.includes('late'));
    tick(TEST_RESOURCE_TIMEOUT_MS - 1);
    w.expectNothingYet();
    tick(1);
    const { error } = await w.next('error');
    assert.equal(error.code, status.NOT_FOUND);
    assert.match(error.message, /not received within/);
    // A later arrival is still delivered.
    env.server.setResources('cluster', [edsCluster('late')]);
    env.server.releaseResponses();
    await w.next('changed');
  });
});
