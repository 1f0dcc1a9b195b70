// Circuit breaking (gRFC A32, A37): one in-flight counter per {cluster, EDS service name} in the
// process, whoever uses the cluster. Counters are process-wide, so each spec uses its own names.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { watchClusterEndpoints, type Priority } from '../../lib';
// Internal on purpose: the process-wide counter is not public (decision 0032); its own folder's spec.
import { callCounter } from '../../lib/clusters';
import { aggregateCluster, edsCluster, endpoints } from '../../lib/testing';
import { startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

describe('circuit breakers', () => {
  let env: Env;
  afterEach(() => env?.close());

  it('two consumers of one cluster share one limit', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [
      aggregateCluster('cb-A', ['cb-B', 'cb-C']),
      edsCluster('cb-B'),
      {
        ...edsCluster('cb-C', { serviceName: 'cb-C-eds' }),
        circuit_breakers: { thresholds: [{ priority: 'DEFAULT', max_requests: 2 }] },
      },
    ]);
    env.server.setResources('endpoint', [
      endpoints('cb-B', [{ addresses: ['127.0.0.1:8001'] }]),
      endpoints('cb-C-eds', [{ addresses: ['127.0.0.1:8002'] }]),
    ]);
    // cb-C directly, and through the aggregate: two resolvers, one counter.
    const viaAggregate = new RecordingWatcher<readonly Priority[]>();
    const direct = new RecordingWatcher<readonly Priority[]>();
    const one = watchClusterEndpoints(env.client, 'cb-A', viaAggregate);
    const two = watchClusterEndpoints(env.client, 'cb-C', direct);
    const p1 = (await viaAggregate.update()).find((p) => p.cluster === 'cb-C')!;
    const [p2] = await direct.update();
    assert.equal(p1.maxConcurrentRequests, 2);
    assert.equal(p2!.maxConcurrentRequests, 2);

    const c1 = callCounter(p1.cluster, p1.edsServiceName);
    const c2 = callCounter(p2!.cluster, p2!.edsServiceName);
    assert.equal(c1, c2, 'the same object everywhere in the process');
    assert.equal(c1.tryAcquire(p1.maxConcurrentRequests), true);
    assert.equal(c2.tryAcquire(p2!.maxConcurrentRequests), true);
    assert.equal(c1.tryAcquire(p1.maxConcurrentRequests), false, 'the limit is shared');
    assert.equal(c2.inFlight, 2);
    c1.release();
    assert.equal(c2.tryAcquire(p2!.maxConcurrentRequests), true);
    c1.release();
    c2.release();
    assert.equal(c1.inFlight, 0);
    one.cancel();
    two.cancel();
  });

  it('a release below zero is clamped', () => {
    const counter = callCounter('cb-clamp', undefined);
    counter.release();
    counter.release();
    assert.equal(counter.inFlight, 0);
    assert.equal(counter.tryAcquire(1), true);
    assert.equal(counter.tryAcquire(1), false, 'the extra releases gave no credit');
    counter.release();
  });

  it('different eds service names are separate counters', () => {
    const none = callCounter('cb-X', undefined);
    const a = callCounter('cb-X', 'a');
    const b = callCounter('cb-X', 'b');
    const empty = callCounter('cb-X', '');
    assert.equal(new Set([none, a, b, empty]).size, 4);
    assert.equal(callCounter('cb-X', 'a'), a);
    assert.equal(a.tryAcquire(1), true);
    assert.equal(b.tryAcquire(1), true, 'a full counter does not limit another');
    assert.equal(none.inFlight, 0);
    a.release();
    b.release();
  });
});
