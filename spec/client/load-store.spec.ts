// The LRS load store (lib/client/lrs/load-store.ts): what one report carries, per cluster and EDS
// service name and per locality, and what starts again at zero after it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LoadStore } from '../../lib/client/lrs/load-store';
import type { ClusterStats } from '../../lib/generated/protos';

const Z1 = { region: 'r', zone: 'z1', subZone: '' };
const Z2 = { region: 'r', zone: 'z2', subZone: 's' };

function storeWithClock() {
  const clock = { now: 1000 };
  return { clock, store: new LoadStore(() => clock.now) };
}

/** A report as plain data, locality stats in a compact form. */
function plain(stats: readonly ClusterStats[]) {
  return stats.map((c) => ({
    cluster: c.clusterName,
    service: c.clusterServiceName,
    localities: c.upstreamLocalityStats.map((l) => ({
      zone: l.locality?.zone,
      issued: l.totalIssuedRequests,
      succeeded: l.totalSuccessfulRequests,
      errored: l.totalErrorRequests,
      inProgress: l.totalRequestsInProgress,
    })),
    dropped: c.totalDroppedRequests,
    categories: c.droppedRequests.map((d) => [d.category, d.droppedCount]),
    intervalMs:
      Number(c.loadReportInterval?.seconds ?? 0) * 1000 + (c.loadReportInterval?.nanos ?? 0) / 1e6,
  }));
}

describe('LoadStore', () => {
  it('counts per locality over one interval; in-flight calls are a gauge that carries over', () => {
    const { clock, store } = storeWithClock();
    const load = store.acquire('A', 'A-eds');
    const z1 = load.locality(Z1);
    const z2 = load.locality(Z2);
    for (let i = 0; i < 3; i++) z1.callStarted();
    z1.callFinished(true);
    z1.callFinished(false);
    z2.callStarted();
    z2.callFinished(true);
    clock.now += 1500.25;
    assert.deepEqual(plain(store.report('all')), [
      {
        cluster: 'A',
        service: 'A-eds',
        localities: [
          { zone: 'z1', issued: 3, succeeded: 1, errored: 1, inProgress: 1 },
          { zone: 'z2', issued: 1, succeeded: 1, errored: 0, inProgress: 0 },
        ],
        dropped: 0,
        categories: [],
        intervalMs: 1500.25,
      },
    ]);
    // Next interval: z1's call still in flight (and then done), z2 idle and left out.
    clock.now += 10;
    assert.deepEqual(plain(store.report('all'))[0]?.localities, [
      { zone: 'z1', issued: 0, succeeded: 0, errored: 0, inProgress: 1 },
    ]);
    z1.callFinished(true);
    clock.now += 10;
    assert.deepEqual(plain(store.report('all'))[0]?.localities, [
      { zone: 'z1', issued: 0, succeeded: 1, errored: 0, inProgress: 0 },
    ]);
    assert.deepEqual(store.report('all'), [], 'nothing to say: no ClusterStats');
  });

  it('drops by category and by circuit breaking: categories listed, both in the total', () => {
    const { store } = storeWithClock();
    const load = store.acquire('A', undefined);
    load.dropped('lb');
    load.dropped('lb');
    load.dropped('throttle');
    load.droppedUncategorized();
    const [stats] = plain(store.report('all'));
    assert.equal(stats?.service, '', 'no EDS service name');
    assert.deepEqual(stats?.categories, [
      ['lb', 2],
      ['throttle', 1],
    ]);
    assert.equal(stats?.dropped, 4);
    assert.deepEqual(stats?.localities, []);
    assert.deepEqual(store.report('all'), [], 'drops start again at zero');
  });

  it('reports only the clusters asked for, by cluster name; the others keep counting until asked', () => {
    const { clock, store } = storeWithClock();
    const a = store.acquire('A', undefined);
    const b = store.acquire('B', 'B-eds');
    a.locality(Z1).callStarted();
    b.locality(Z1).callStarted();
    clock.now += 100;
    assert.deepEqual(
      plain(store.report(new Set(['B']))).map((s) => s.cluster),
      ['B'],
    );
    a.locality(Z1).callStarted();
    clock.now += 100;
    const [later] = plain(store.report(new Set(['A', 'X'])));
    assert.equal(later?.cluster, 'A');
    assert.equal(later?.localities[0]?.issued, 2, 'both intervals of A');
    assert.equal(later?.intervalMs, 200, 'the interval covers everything reported');
  });

  it('one entry per {cluster, EDS service name}; users share it', () => {
    const { store } = storeWithClock();
    assert.equal(store.acquire('A', 'x'), store.acquire('A', 'x'));
    assert.notEqual(store.acquire('A', 'x'), store.acquire('A', undefined));
    assert.notEqual(store.acquire('A', ''), store.acquire('A', undefined));
    assert.equal(store.size, 3);
  });

  it('an entry nobody holds is forgotten once what it counted has been reported', () => {
    const { store } = storeWithClock();
    const idle = store.acquire('idle', undefined);
    const busy = store.acquire('busy', undefined);
    busy.locality(Z1).callStarted();
    store.release(idle);
    store.release(busy);
    assert.equal(store.size, 2);
    assert.deepEqual(
      plain(store.report(new Set(['other']))).map((s) => s.cluster),
      [],
    );
    assert.equal(store.size, 1, 'the idle one is gone; the busy one has a call in flight');
    busy.locality(Z1).callFinished(true);
    assert.equal(store.report('all').length, 1);
    assert.equal(store.size, 0);
  });

  it('a locality forgotten while idle comes back with its next call', () => {
    const { store } = storeWithClock();
    const load = store.acquire('A', undefined);
    const z1 = load.locality(Z1);
    z1.callStarted();
    z1.callFinished(true);
    store.report('all');
    store.report('all'); // idle over a whole interval: forgotten
    assert.equal(z1.attached, false);
    z1.callStarted();
    assert.equal(z1.attached, true);
    assert.equal(load.locality(Z1), z1);
    assert.equal(plain(store.report('all'))[0]?.localities[0]?.issued, 1);
  });

  it('a forgotten locality whose place was taken counts into the new entry', () => {
    const { store } = storeWithClock();
    const load = store.acquire('A', undefined);
    const old = load.locality(Z1);
    old.callStarted();
    old.callFinished(true);
    store.report('all');
    store.report('all');
    const fresh = load.locality(Z1);
    assert.notEqual(fresh, old);
    fresh.callStarted();
    old.callStarted();
    old.callFinished(false);
    assert.deepEqual(plain(store.report('all'))[0]?.localities, [
      { zone: 'z1', issued: 2, succeeded: 0, errored: 1, inProgress: 1 },
    ]);
  });

  it('calls with no locality count under the empty one', () => {
    const { store } = storeWithClock();
    const load = store.acquire('dns', undefined);
    load.locality(undefined).callStarted();
    const stats = store.report('all')[0];
    assert.deepEqual(stats?.upstreamLocalityStats[0]?.locality, {
      region: '',
      zone: '',
      subZone: '',
    });
  });
});
