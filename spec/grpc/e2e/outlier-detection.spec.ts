// End to end: outlier detection (gRFC A50) with grpc-js's outlier_detection policy, above the
// cluster's cluster_impl (gRFC A75's place). A backend that fails its RPCs is ejected after an
// interval in which it failed enough of them, and round robin sends everything to the others
// until its ejection time is over. Intervals are 500 ms here (a loaded machine sends fewer
// RPCs: an interval must still see the request volume); every wait is bounded.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { edsCluster, endpoints, type JsonObject } from '../../../lib/testing';
import {
  UNAVAILABLE,
  sendRpcs,
  show,
  startXdsEnv,
  waitForAllOn,
  waitForDistribution,
  type XdsEnv,
} from '../helpers/xds-env';

/** An EDS round robin cluster with this `outlier_detection` (proto3 JSON). */
function clusterWith(outlierDetection?: JsonObject): JsonObject {
  return {
    ...edsCluster('echo'),
    ...(outlierDetection ? { outlier_detection: outlierDetection } : {}),
  };
}

/** Failure percentage only: over 50 % failed among at least 10 RPCs, with 2 hosts or more. */
function failurePercentage(baseEjectionTime = '30s'): JsonObject {
  return {
    interval: '0.5s',
    base_ejection_time: baseEjectionTime,
    max_ejection_percent: 50,
    enforcing_success_rate: 0,
    enforcing_failure_percentage: 100,
    failure_percentage_threshold: 50,
    failure_percentage_minimum_hosts: 2,
    failure_percentage_request_volume: 10,
  };
}

const FAIL = { code: grpc.status.UNAVAILABLE, details: 'a is failing' } as const;

describe('e2e: outlier detection (A50)', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b']);
  });
  afterEach(() => env.close());

  function serve(outlierDetection?: JsonObject): void {
    env.serve({
      clusters: [clusterWith(outlierDetection)],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a', 'b') }])],
    });
  }

  it('ejects a backend whose failure percentage is over the threshold: traffic moves away from it', async () => {
    const a = env.backends.a!;
    a.behaviour = FAIL;
    serve(failurePercentage());
    const client = env.client();
    await waitForDistribution(client, 'a reached and failing', (c) => c.has(UNAVAILABLE));
    await waitForAllOn(client, 'b');
    const before = a.rpcs;
    const counts = await sendRpcs(client, 100);
    assert.deepStrictEqual(show(counts), show(new Map([['b', 100]])));
    assert.equal(a.rpcs, before, 'an ejected backend gets no RPCs');
  });

  it('ejects by success rate: below mean - stdev × stdev_factor / 1000', async () => {
    env.backends.a!.behaviour = FAIL;
    // Success rates 0 and 1: mean 0.5, stdev 0.5; with a factor of 0.5 the threshold is 0.25.
    serve({
      interval: '0.5s',
      max_ejection_percent: 50,
      success_rate_minimum_hosts: 2,
      success_rate_request_volume: 10,
      success_rate_stdev_factor: 500,
    });
    const client = env.client();
    await waitForDistribution(client, 'a reached and failing', (c) => c.has(UNAVAILABLE));
    await waitForAllOn(client, 'b');
  });

  it('returns a backend to service once its ejection time is over and it answers', async () => {
    const a = env.backends.a!;
    a.behaviour = FAIL;
    serve(failurePercentage('1s'));
    const client = env.client();
    await waitForDistribution(client, 'a reached and failing', (c) => c.has(UNAVAILABLE));
    // Small batches: one must fit in the ejection, however slowly RPCs go.
    await waitForAllOn(client, 'b', { batch: 10 });
    a.behaviour = 'answer';
    // Bounded by time, not by RPCs: a comes back at the first interval after its ejection time
    // (1 s, then up to 0.5 s), and on an idle machine 2,000 RPCs take less than that.
    await waitForDistribution(client, 'a back', (c) => c.has('a') && !c.has(UNAVAILABLE), {
      maxRpcs: Number.POSITIVE_INFINITY,
    });
  });

  it('a failing backend keeps its share without outlier detection, and loses it once the Cluster adds it', async () => {
    env.backends.a!.behaviour = FAIL;
    serve();
    const client = env.client();
    await waitForDistribution(client, 'a reached and failing', (c) => c.has(UNAVAILABLE));
    const counts = await sendRpcs(client, 100);
    // Round robin: half on a, all failing, however long it goes on.
    assert.ok((counts.get(UNAVAILABLE) ?? 0) >= 40, show(counts));
    serve(failurePercentage());
    await waitForAllOn(client, 'b');
    // The cluster's policies were rebuilt on the connections it had.
    assert.equal(env.backends.b!.peers.size, 1, [...env.backends.b!.peers].join(', '));
  });
});
