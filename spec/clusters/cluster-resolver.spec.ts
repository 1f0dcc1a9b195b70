// The cluster resolver (gRFC A37's xds_cluster_resolver), against the real management server.
//
// 1. Priorities follow mechanism order; nothing is reported until every mechanism has a result
//    or an error.
// 2. EDS: round_robin, ignores re-resolution, carries drops and limits, healthy endpoints only.
//    Logical DNS: one empty locality, pick_first, re-resolved on request and on a timer.
// 3. A mechanism that fails before any result gives one empty priority; a later result fills it.
// 4. Priority names follow localities across updates.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status } from '../../lib';
import {
  ClusterResolver,
  watchClusterEndpoints,
  type DiscoveryMechanism,
  type Priority,
} from '../../lib';
import {
  aggregateCluster,
  edsCluster,
  endpoints,
  logicalDnsCluster,
  type JsonObject,
} from '../../lib/testing';
import { EXPIRY_TIMEOUT_MS } from '../helpers/constants';
import { EDS, settled, startEnv, type Env } from '../helpers/env';
import { expireMissing, mockClock, realClock } from '../helpers/clock';
import { RecordingWatcher } from '../helpers/recording-watcher';
import { until } from '../helpers/wait';
import { fakeDns, summarize } from './helpers';

const eds = (cluster: string, more: Partial<DiscoveryMechanism> = {}): DiscoveryMechanism => ({
  cluster,
  type: 'EDS',
  maxConcurrentRequests: 1024,
  ...more,
});
const logicalDns = (cluster: string, dnsHostname: string): DiscoveryMechanism => ({
  cluster,
  type: 'LOGICAL_DNS',
  dnsHostname,
  maxConcurrentRequests: 1024,
});
const names = (priorities: readonly Priority[]) => priorities.map((p) => p.name);
const loc = (region: string) => ({ region, zone: 'z', subZone: '' });

/** The names of the last EDS request: what the client is subscribed to. */
function subscribedEndpoints(env: Env): string[] | undefined {
  const requests = env.server.requests.filter((r) => r.typeUrl === EDS);
  const last = requests[requests.length - 1];
  return last && [...last.resourceNames].sort();
}

describe('cluster resolver', () => {
  let env: Env;
  let resolver: ClusterResolver | undefined;
  afterEach(async () => {
    realClock();
    resolver?.close();
    resolver = undefined;
    await env?.close();
  });

  it('eds priorities use round robin and carry drops limits and the service name', async () => {
    env = await startEnv();
    const assignment: JsonObject = {
      ...endpoints('B-eds', [
        { locality: loc('r0'), addresses: ['127.0.0.1:8001'] },
        { priority: 1, locality: loc('r1'), addresses: ['127.0.0.1:8002'] },
      ]),
      policy: {
        drop_overloads: [
          { category: 'lb', drop_percentage: { numerator: 5, denominator: 'HUNDRED' } },
        ],
      },
    };
    env.server.setResources('endpoint', [assignment]);
    const rec = new RecordingWatcher<readonly Priority[]>();
    const lrsServer = env.client.bootstrap.xdsServers[0]!;
    resolver = new ClusterResolver(
      env.client,
      [eds('B', { edsServiceName: 'B-eds', maxConcurrentRequests: 7, lrsServer })],
      rec,
    );
    assert.equal(rec.events.length, 0, 'called inside the constructor');
    const priorities = await rec.update();
    assert.deepEqual(names(priorities), ['B[child0]', 'B[child1]']);
    for (const priority of priorities) {
      assert.equal(priority.childPolicy, 'round_robin');
      assert.equal(priority.ignoreReresolutionRequests, true);
      assert.deepEqual(priority.dropCategories, [{ category: 'lb', requestsPerMillion: 50_000 }]);
      assert.equal(priority.maxConcurrentRequests, 7);
      assert.equal(priority.edsServiceName, 'B-eds');
      assert.equal(priority.lrsServer, lrsServer);
    }
    assert.deepEqual(summarize(priorities[1]!).localities, [
      { locality: 'r1/z/', addresses: ['127.0.0.1:8002'] },
    ]);
    assert.deepEqual(subscribedEndpoints(env), ['B-eds']);
  });

  it('only endpoints that are healthy of unknown health or draining are kept', async () => {
    env = await startEnv();
    const assignment = endpoints('B', [
      {
        locality: loc('r0'),
        addresses: ['127.0.0.1:8001', '127.0.0.1:8002', '127.0.0.1:8003', '127.0.0.1:8004'],
      },
    ]);
    const statuses = ['HEALTHY', 'UNHEALTHY', 'UNKNOWN', 'DRAINING'];
    const lbEndpoints = (assignment['endpoints'] as { lb_endpoints: JsonObject[] }[])[0]!
      .lb_endpoints;
    lbEndpoints.forEach((e, i) => (e['health_status'] = statuses[i]));
    env.server.setResources('endpoint', [assignment]);
    const rec = new RecordingWatcher<readonly Priority[]>();
    resolver = new ClusterResolver(env.client, [eds('B')], rec);
    const [priority] = await rec.update();
    assert.deepEqual(summarize(priority!).localities[0]!.addresses, [
      '127.0.0.1:8001',
      '127.0.0.1:8003',
      '127.0.0.1:8004',
    ]);
  });

  it('an eds resource that does not exist gives one empty priority until it arrives', async () => {
    env = await startEnv({ resourceTimeoutMs: EXPIRY_TIMEOUT_MS });
    const rec = new RecordingWatcher<readonly Priority[]>();
    resolver = new ClusterResolver(env.client, [eds('B')], rec);
    const [empty, ...rest] = await rec.update();
    assert.equal(rest.length, 0);
    assert.deepEqual(empty!.localities, []);
    assert.equal(empty!.childPolicy, 'round_robin');
    // Every mechanism failed: the listener hears why.
    const error = await rec.error();
    assert.equal(error.code, status.UNAVAILABLE);
    assert.match(error.reason, /^no endpoints: cluster "B": EDS resource "B": .*does not exist/);

    env.server.setResources('endpoint', [
      endpoints('B', [{ locality: loc('r0'), addresses: ['127.0.0.1:8001'] }]),
    ]);
    const [filled] = await rec.update();
    assert.deepEqual(summarize(filled!).localities, [
      { locality: 'r0/z/', addresses: ['127.0.0.1:8001'] },
    ]);
  });

  it('nothing is reported until every mechanism has a result', async () => {
    env = await startEnv();
    env.server.setResources('endpoint', [endpoints('B', [{ addresses: ['127.0.0.1:8001'] }])]);
    const rec = new RecordingWatcher<readonly Priority[]>();
    resolver = new ClusterResolver(env.client, [eds('B'), eds('C')], rec);
    // B has arrived and C has not (its does-not-exist timer is still running).
    await env.server.waitForRequest((r) => r.typeUrl === EDS && r.resourceNames.length === 2);
    await rec.expectNothingUntil(settled(env.server));
    env.server.setResources('endpoint', [
      endpoints('B', [{ addresses: ['127.0.0.1:8001'] }]),
      endpoints('C', [{ addresses: ['127.0.0.1:8002'] }]),
    ]);
    assert.deepEqual(names(await rec.update()), ['B[child0]', 'C[child0]']);
  });

  it('logical dns gives one pick first priority with every address on the port', async () => {
    env = await startEnv();
    const dns = fakeDns({ 'dns.example': ['10.0.0.1', '2001:db8::1'] });
    const rec = new RecordingWatcher<readonly Priority[]>();
    resolver = new ClusterResolver(env.client, [logicalDns('E', 'dns.example:8080')], rec, {
      dnsResolver: dns,
    });
    const priorities = await rec.update();
    assert.deepEqual(priorities.map(summarize), [
      {
        name: 'E[child0]',
        cluster: 'E',
        childPolicy: 'pick_first',
        localities: [{ locality: '//', addresses: ['10.0.0.1:8080', '2001:db8::1:8080'] }],
      },
    ]);
    assert.equal(priorities[0]!.ignoreReresolutionRequests, false);
    assert.equal(priorities[0]!.localities[0]!.weight, 1);
  });

  it('a dns failure gives an empty priority and re-resolution fills it', async () => {
    env = await startEnv();
    const dns = fakeDns({
      'dns.example': (call) => (call === 1 ? new Error('SERVFAIL') : ['10.0.0.1']),
    });
    const rec = new RecordingWatcher<readonly Priority[]>();
    resolver = new ClusterResolver(env.client, [logicalDns('E', 'dns.example:443')], rec, {
      dnsResolver: dns,
    });
    const [failed] = await rec.update();
    assert.deepEqual(failed!.localities, []);
    assert.equal(failed!.childPolicy, 'pick_first');
    assert.match(
      (await rec.error()).message,
      /cluster "E": DNS name "dns.example:443": .*SERVFAIL/,
    );

    resolver.requestReresolution();
    const [filled] = await rec.update();
    assert.deepEqual(summarize(filled!).localities[0]!.addresses, ['10.0.0.1:443']);
    assert.equal(filled!.name, failed!.name, 'the DNS priority keeps its name');
  });

  it('an ipv6 literal is looked up without brackets and a bad name is an empty priority', async () => {
    env = await startEnv();
    const dns = fakeDns({ '2001:db8::5': ['2001:db8::5'] });
    const rec = new RecordingWatcher<readonly Priority[]>();
    resolver = new ClusterResolver(
      env.client,
      [logicalDns('V6', '[2001:db8::5]:443'), logicalDns('Bad', 'no-port')],
      rec,
      { dnsResolver: dns },
    );
    const [v6, bad] = await rec.update();
    assert.deepEqual(summarize(v6!).localities[0]!.addresses, ['2001:db8::5:443']);
    assert.deepEqual(bad!.localities, []);
    assert.equal(dns.calls.size, 1);
  });

  it('the refresh interval re-resolves without being asked', async (t) => {
    env = await startEnv();
    const tick = mockClock(t, ['setInterval']);
    const dns = fakeDns({ 'dns.example': (call) => [`10.0.0.${call}`] });
    const lookups = () => dns.calls.get('dns.example');
    const address = (priorities: readonly Priority[]) =>
      summarize(priorities[0]!).localities[0]!.addresses[0];
    const rec = new RecordingWatcher<readonly Priority[]>();
    resolver = new ClusterResolver(env.client, [logicalDns('E', 'dns.example:80')], rec, {
      dnsResolver: dns,
      dnsRefreshIntervalMs: 1000,
    });
    assert.equal(address(await rec.update()), '10.0.0.1:80');
    tick(999);
    assert.equal(lookups(), 1, 'not before the interval');
    tick(1);
    assert.equal(lookups(), 2);
    assert.equal(address(await rec.update()), '10.0.0.2:80');
    tick(1000);
    const third = await rec.update();
    assert.equal(address(third), '10.0.0.3:80');
    assert.equal(third[0]!.name, 'E[child0]');
    resolver.close();
    tick(10_000);
    assert.equal(lookups(), 3, 'no lookups after close()');
    rec.expectNothingYet();
  });

  it('eds then dns and dns then eds keep the aggregate order', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [
      aggregateCluster('EdsFirst', ['B', 'E']),
      aggregateCluster('DnsFirst', ['E', 'B']),
      edsCluster('B'),
      logicalDnsCluster('E', 'dns.example', 443),
    ]);
    env.server.setResources('endpoint', [endpoints('B', [{ addresses: ['127.0.0.1:8001'] }])]);
    const dnsResolver = fakeDns({ 'dns.example': ['10.0.0.1'] });
    const edsFirst = new RecordingWatcher<readonly Priority[]>();
    const dnsFirst = new RecordingWatcher<readonly Priority[]>();
    const one = watchClusterEndpoints(env.client, 'EdsFirst', edsFirst, { dnsResolver });
    const two = watchClusterEndpoints(env.client, 'DnsFirst', dnsFirst, { dnsResolver });
    const byCluster = (p: readonly Priority[]) => p.map((x) => [x.cluster, x.childPolicy]);
    assert.deepEqual(byCluster(await edsFirst.update()), [
      ['B', 'round_robin'],
      ['E', 'pick_first'],
    ]);
    assert.deepEqual(byCluster(await dnsFirst.update()), [
      ['E', 'pick_first'],
      ['B', 'round_robin'],
    ]);
    one.cancel();
    two.cancel();
  });

  it('watch cluster endpoints reports a tree error and recovers', async (t) => {
    env = await startEnv();
    env.server.setResources('cluster', [aggregateCluster('A', ['B', 'D']), edsCluster('B')]);
    env.server.setResources('endpoint', [endpoints('B', [{ addresses: ['127.0.0.1:8001'] }])]);
    // Only D's timer may fire, whatever the load: on the mock clock, once the rest is cached.
    const tick = mockClock(t);
    const rec = new RecordingWatcher<readonly Priority[]>();
    const watch = watchClusterEndpoints(env.client, 'A', rec);
    await expireMissing(env.server, tick, ['D']);
    assert.equal((await rec.error()).reason, 'A -> D: cluster "D" does not exist');

    env.server.setResource('cluster', edsCluster('D'));
    env.server.setResources('endpoint', [
      endpoints('B', [{ addresses: ['127.0.0.1:8001'] }]),
      endpoints('D', [{ addresses: ['127.0.0.1:8002'] }]),
    ]);
    assert.deepEqual(names(await rec.update()), ['B[child0]', 'D[child0]']);
    watch.cancel();
    // Nothing left to watch: once the client has closed its stream, nothing can come.
    await until('the stream to close', () => env.server.streamCount === 0);
    rec.expectNothingYet();
  });

  it('priority names follow their localities across updates', async () => {
    env = await startEnv();
    const publish = (...priorities: string[][]) =>
      env.server.setResources('endpoint', [
        endpoints(
          'B',
          priorities.flatMap((regions, priority) =>
            regions.map((region, i) => ({
              priority,
              locality: loc(region),
              addresses: [`127.0.0.1:${8000 + priority * 10 + i}`],
            })),
          ),
        ),
      ]);
    publish(['L1'], ['L2']);
    const rec = new RecordingWatcher<readonly Priority[]>();
    resolver = new ClusterResolver(env.client, [eds('B')], rec);
    assert.deepEqual(names(await rec.update()), ['B[child0]', 'B[child1]']);

    // A new priority in front: the old ones keep their names, the new one gets a new name.
    publish(['L0'], ['L1'], ['L2']);
    assert.deepEqual(names(await rec.update()), ['B[child2]', 'B[child0]', 'B[child1]']);

    // L2 moves to the front and brings its name; L1 stays with L0 and keeps its name.
    publish(['L2'], ['L1', 'L0']);
    assert.deepEqual(names(await rec.update()), ['B[child1]', 'B[child0]']);

    // L1 and L0 shared a name: the first priority takes it, the second gets a new one.
    publish(['L1'], ['L0']);
    assert.deepEqual(names(await rec.update()), ['B[child0]', 'B[child3]']);
  });

  it('update mechanisms keeps unchanged discoveries and drops removed ones', async () => {
    env = await startEnv();
    env.server.setResources('endpoint', [
      endpoints('B', [{ locality: loc('b'), addresses: ['127.0.0.1:8001'] }]),
      endpoints('C', [{ locality: loc('c'), addresses: ['127.0.0.1:8002'] }]),
    ]);
    const rec = new RecordingWatcher<readonly Priority[]>();
    resolver = new ClusterResolver(env.client, [eds('B')], rec);
    const [b] = await rec.update();

    resolver.updateMechanisms([eds('C'), eds('B')]);
    const both = await rec.update();
    assert.deepEqual(names(both), ['C[child0]', 'B[child0]']);
    assert.equal(both[1]!.localities, b!.localities, 'B was not watched again');

    resolver.updateMechanisms([eds('C')]);
    assert.deepEqual(names(await rec.update()), ['C[child0]']);
    await until(
      'EDS unsubscription of B',
      () => JSON.stringify(subscribedEndpoints(env)) === '["C"]',
    );
    resolver.close();
    // Nothing left to watch: the client closes its stream rather than send an empty list.
    await until('EDS unsubscription of C', () => env.server.streamCount === 0);
    rec.expectNothingYet();
  });
});
