// Fallback between the xDS servers of an authority (gRFC A71), against real servers on
// 127.0.0.1, some of them dead ports that come alive.
//
// 1. A connectivity failure of the current server while a watched resource is uncached moves
//    the authority to its next server, which subscribes every watched resource; the watchers
//    hear nothing of the failure.
// 2. The failed servers keep being retried; the first response of a higher one makes it
//    current again, and the streams of the servers below it are closed.
// 3. While everything watched is cached, a failure does not fall back: the cache keeps serving
//    (ambient error), and the primary is retried.
// 4. Watchers hear of a connectivity error only once every server has failed.
// 5. No switch ever loses a cached resource.
// 6. The does-not-exist timer runs on the stream of the server in use.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, type ClusterUpdate, type EndpointUpdate } from '../../lib';
import { edsCluster, endpoints } from '../../lib/testing';
import { EXPIRY_TIMEOUT_MS } from '../helpers/constants';
import { API_TYPES, EDS } from '../helpers/env';
import { startFleet, type Fleet } from '../helpers/fleet';
import { RecordingWatcher } from '../helpers/recording-watcher';
import { until } from '../helpers/wait';

const cluster = (name: string, serviceName: string) => edsCluster(name, { serviceName });
/** Which server's version of a cluster the client has: each serves its own service name. */
const service = (update: ClusterUpdate) => (update.type === 'EDS' ? update.edsServiceName : '');
const locality = (address: string) => [{ addresses: [address] }];

for (const apiType of API_TYPES)
  describe(`fallback (${apiType})`, () => {
    let fleet: Fleet | undefined;
    afterEach(async () => {
      await fleet?.close();
      fleet = undefined;
    });

    /** What the client's dump says of one resource. */
    const dumped = (name: string) => fleet!.client.dump().find((d) => d.name === name)!;

    it('fallback on primary unreachable while uncached', async () => {
      fleet = await startFleet([false, true], { apiType });
      fleet.live(1).setResources('cluster', [cluster('A', 'from-fallback')]);
      const watcher = new RecordingWatcher<ClusterUpdate>();
      fleet.client.watchCluster('A', watcher);
      // The first event is the fallback's resource: no error on the way.
      const { resource } = await watcher.next('changed');
      assert.equal(service(resource), 'from-fallback');
      assert.deepEqual(fleet.fallbacks, [
        {
          authority: undefined,
          server: fleet.addresses[1],
          previous: fleet.addresses[0],
          reason: 'fallback',
        },
      ]);
      assert.equal(dumped('A').serverInUse, fleet.addresses[1]);
      assert.equal(dumped('A').cached, true);
    });

    it('back to the primary on its first response and the fallback stream closed', async () => {
      fleet = await startFleet([false, true], { apiType });
      const fallback = fleet.live(1);
      fallback.setResources('cluster', [cluster('A', 'from-fallback')]);
      const watcher = new RecordingWatcher<ClusterUpdate>();
      fleet.client.watchCluster('A', watcher);
      await watcher.next('changed');
      assert.equal(fallback.streamCount, 1);

      const primary = await fleet.revive(0);
      primary.setResources('cluster', [cluster('A', 'from-primary')]);
      const { resource } = await watcher.next('changed');
      assert.equal(service(resource), 'from-primary');
      const recovered = await fleet.fallback(2);
      assert.deepEqual(recovered, {
        authority: undefined,
        server: fleet.addresses[0],
        previous: fleet.addresses[1],
        reason: 'recovered',
      });
      assert.equal(dumped('A').serverInUse, fleet.addresses[0]);
      await until('the fallback stream is closed', () => fallback.streamCount === 0);
      // An update on the fallback reaches nobody now.
      const opened = fallback.streamsOpened;
      fallback.setResources('cluster', [cluster('A', 'stale')]);
      primary.setResources('cluster', [cluster('A', 'primary-again')]);
      assert.equal(service((await watcher.next('changed')).resource), 'primary-again');
      assert.equal(fallback.streamsOpened, opened);
    });

    it('three servers the first two dead the third serves and each revival takes over', async () => {
      fleet = await startFleet([false, false, true], { apiType });
      fleet.live(2).setResources('cluster', [cluster('A', 'third')]);
      const watcher = new RecordingWatcher<ClusterUpdate>();
      fleet.client.watchCluster('A', watcher);
      assert.equal(service((await watcher.next('changed')).resource), 'third');
      const [first, second] = fleet.fallbacks;
      assert.deepEqual(
        [first, second].map((e) => [e?.previous, e?.server, e?.reason]),
        [
          [fleet.addresses[0], fleet.addresses[1], 'fallback'],
          [fleet.addresses[1], fleet.addresses[2], 'fallback'],
        ],
      );
      assert.equal(dumped('A').serverInUse, fleet.addresses[2]);

      // The second comes alive: the client goes up to it, and drops the third.
      const second2 = await fleet.revive(1);
      second2.setResources('cluster', [cluster('A', 'second')]);
      assert.equal(service((await watcher.next('changed')).resource), 'second');
      assert.equal(dumped('A').serverInUse, fleet.addresses[1]);
      await until('the third server is dropped', () => fleet!.live(2).streamCount === 0);

      // Then the primary: up again, the second is dropped too.
      const primary = await fleet.revive(0);
      primary.setResources('cluster', [cluster('A', 'primary')]);
      assert.equal(service((await watcher.next('changed')).resource), 'primary');
      assert.equal(dumped('A').serverInUse, fleet.addresses[0]);
      await until('the second server is dropped', () => second2.streamCount === 0);
      assert.deepEqual(
        fleet.fallbacks.slice(2).map((e) => [e.previous, e.server, e.reason]),
        [
          [fleet.addresses[2], fleet.addresses[1], 'recovered'],
          [fleet.addresses[1], fleet.addresses[0], 'recovered'],
        ],
      );
    });

    it('no fallback while everything watched is cached the cache serves and the primary is retried', async () => {
      fleet = await startFleet([true, true], { apiType });
      const [primary, fallback] = [fleet.live(0), fleet.live(1)];
      primary.setResources('cluster', [cluster('A', 'from-primary')]);
      fallback.setResources('cluster', [cluster('A', 'from-fallback')]);
      const watcher = new RecordingWatcher<ClusterUpdate>();
      fleet.client.watchCluster('A', watcher);
      await watcher.next('changed');

      primary.setStreamFault({
        endBeforeResponseWith: { code: status.UNAVAILABLE, details: 'down' },
      });
      const opened = primary.streamsOpened;
      primary.endStreams(status.UNAVAILABLE, 'down');
      const ambient = await watcher.next('ambient');
      assert.equal(ambient.error.code, status.UNAVAILABLE);
      // The primary is retried, again and again; the fallback is never asked.
      await primary.waitForStreams(opened + 3);
      assert.equal(fallback.streamsOpened, 0);
      assert.equal(fleet.fallbacks.length, 0);
      assert.equal(dumped('A').cached, true);
      assert.equal(dumped('A').serverInUse, fleet.addresses[0]);

      // Back up: the primary serves again (each failed retry was one more ambient error), the
      // fallback still never asked.
      primary.setStreamFault(undefined);
      primary.setResources('cluster', [cluster('A', 'primary-again')]);
      const { resource } = await watcher.skipUntil('changed');
      assert.equal(service(resource), 'primary-again');
      assert.equal(fallback.streamsOpened, 0);
    });

    it('a new uncached watch while the primary is failing falls back and no cached resource is lost', async () => {
      fleet = await startFleet([true, true], { apiType });
      const [primary, fallback] = [fleet.live(0), fleet.live(1)];
      const address = (update: EndpointUpdate) => update.priorities[0]![0]!.endpoints[0]!.address;
      primary.setResources('endpoint', [endpoints('A', locality('10.0.0.1:80'))]);
      fallback.setResources('endpoint', [
        endpoints('A', locality('10.0.2.1:80')),
        endpoints('B', locality('10.0.2.2:80')),
      ]);
      const a = new RecordingWatcher<EndpointUpdate>();
      fleet.client.watchEndpoints('A', a);
      await a.next('changed');

      primary.setStreamFault({
        endBeforeResponseWith: { code: status.UNAVAILABLE, details: 'down' },
      });
      primary.endStreams(status.UNAVAILABLE, 'down');
      await a.next('ambient');
      assert.equal(fallback.streamsOpened, 0);
      assert.equal(dumped('A').cached, true);

      // B is uncached: now the failure is a reason to fall back, at once.
      const b = new RecordingWatcher<EndpointUpdate>();
      fleet.client.watchEndpoints('B', b);
      assert.equal(address((await b.next('changed')).resource), '10.0.2.2');
      assert.equal((await fleet.fallback(1)).server, fleet.addresses[1]);
      // The fallback was asked for every watched resource, and its data replaces the cache.
      assert.equal(address((await a.skipUntil('changed')).resource), '10.0.2.1');
      if (apiType === 'AGGREGATED_DELTA_GRPC') {
        const first = await fallback.waitForDeltaRequest((r) => r.typeUrl === EDS);
        assert.deepEqual([...first.resourceNamesSubscribe].sort(), ['A', 'B']);
        // A's version is the primary's: it means nothing to the fallback (decision 0021).
        assert.deepEqual(first.initialResourceVersions, {});
      } else {
        const first = await fallback.waitForRequest((r) => r.typeUrl === EDS);
        assert.deepEqual([...first.resourceNames].sort(), ['A', 'B']);
      }
      assert.equal(dumped('B').serverInUse, fleet.addresses[1]);

      // The primary recovers: both come from it again.
      primary.setStreamFault(undefined);
      primary.setResources('endpoint', [
        endpoints('A', locality('10.0.1.1:80')),
        endpoints('B', locality('10.0.1.2:80')),
      ]);
      assert.equal(address((await a.skipUntil('changed')).resource), '10.0.1.1');
      assert.equal(address((await b.next('changed')).resource), '10.0.1.2');
      assert.equal(dumped('A').serverInUse, fleet.addresses[0]);
      await until('the fallback stream is closed', () => fallback.streamCount === 0);
      // A, cached all along, was never dropped: ambient errors only, never a resource error.
      assert.deepEqual(
        a.events.filter((e) => e.kind === 'error'),
        [],
      );
    });

    it('watchers hear a connectivity error only when every server has failed', async () => {
      fleet = await startFleet([false, false], { apiType });
      const ended = new Set<string>();
      fleet.client.on('disconnected', (e) => void (e.error && ended.add(e.server)));
      const watcher = new RecordingWatcher<ClusterUpdate>();
      fleet.client.watchCluster('A', watcher);
      const { error } = await watcher.next('error');
      assert.equal(error.code, status.UNAVAILABLE);
      // By the time the watcher heard, both servers had failed.
      assert.deepEqual([...ended].sort(), [...fleet.addresses].sort());
      assert.match(error.message, new RegExp(fleet.addresses[1]!.replace(/\./g, '\\.')));
      assert.equal(fleet.fallbacks.length, 1);

      // Both keep being retried: the fallback comes alive first and serves (it is current).
      const fallback = await fleet.revive(1);
      fallback.setResources('cluster', [cluster('A', 'from-fallback')]);
      const { resource } = await watcher.skipUntil('changed');
      assert.equal(service(resource), 'from-fallback');
      assert.equal(dumped('A').serverInUse, fleet.addresses[1]);
    });

    it('the does not exist timer runs on the fallback stream', async () => {
      fleet = await startFleet([false, true], {
        apiType,
        client: { resourceTimeoutMs: EXPIRY_TIMEOUT_MS },
      });
      fleet.live(1).setResources('cluster', [cluster('A', 'from-fallback')]);
      const watcher = new RecordingWatcher<ClusterUpdate>();
      fleet.client.watchCluster('missing', watcher);
      // Not UNAVAILABLE (the primary's failure is not the watcher's business): NOT_FOUND.
      const { error } = await watcher.next('error');
      assert.equal(error.code, status.NOT_FOUND);
      assert.equal(dumped('missing').status, 'DOES_NOT_EXIST');
      assert.equal(dumped('missing').serverInUse, fleet.addresses[1]);
    });
  });

describe('fallback across protocols', () => {
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.close();
    fleet = undefined;
  });

  it('a sotw primary falls back to a delta server and back', async () => {
    fleet = await startFleet([false, true], {
      apiTypes: ['AGGREGATED_GRPC', 'AGGREGATED_DELTA_GRPC'],
    });
    const fallback = fleet.live(1);
    fallback.setResources('cluster', [cluster('A', 'delta-fallback')]);
    const watcher = new RecordingWatcher<ClusterUpdate>();
    fleet.client.watchCluster('A', watcher);
    assert.equal(service((await watcher.next('changed')).resource), 'delta-fallback');
    assert.ok(fallback.deltaRequests.length > 0);
    assert.equal(fallback.requests.length, 0);

    const primary = await fleet.revive(0);
    primary.setResources('cluster', [cluster('A', 'sotw-primary')]);
    assert.equal(service((await watcher.next('changed')).resource), 'sotw-primary');
    assert.ok(primary.requests.length > 0);
    await until('the delta stream is closed', () => fallback.streamCount === 0);
  });
});
