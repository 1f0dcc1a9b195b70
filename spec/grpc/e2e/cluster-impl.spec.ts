// End to end: what xds_cluster_impl does to RPCs (gRFC A37, A32): drops by the
// ClusterLoadAssignment's drop_overloads categories, and circuit breaking at the cluster's
// max_requests — including for RPCs started in the same tick.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { edsCluster, endpoints } from '../../../lib/testing';
import {
  UNAVAILABLE,
  assertShare,
  sendRpc,
  sendRpcs,
  show,
  startXdsEnv,
  waitForAllOn,
  waitForDistribution,
  type XdsEnv,
} from '../helpers/xds-env';
import { waitUntil } from '../helpers/backends';

function withDrops(cluster: string, addresses: string[], drops: [string, number][]) {
  return {
    ...endpoints(cluster, [{ addresses }]),
    policy: {
      drop_overloads: drops.map(([category, percent]) => ({
        category,
        drop_percentage: { numerator: percent, denominator: 'HUNDRED' },
      })),
    },
  };
}

describe('e2e: drops and circuit breaking', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a']);
  });
  afterEach(() => env.close());

  it('drop_overloads at 100 % fails every RPC with UNAVAILABLE naming the category', async () => {
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a') }])],
    });
    const client = env.client();
    await waitForAllOn(client, 'a');
    env.server.setResources('endpoint', [
      withDrops('echo', env.addresses('a'), [['throttle', 100]]),
    ]);
    await waitForDistribution(
      client,
      'every RPC dropped',
      (c) => c.size === 1 && c.has(UNAVAILABLE),
    );
    const reached = env.backends.a!.rpcs;
    const errors = await Promise.allSettled([sendRpc(client), sendRpc(client), sendRpc(client)]);
    for (const result of errors) {
      assert.equal(result.status, 'rejected');
      const error = (result as PromiseRejectedResult).reason as grpc.ServiceError;
      assert.equal(error.code, grpc.status.UNAVAILABLE);
      assert.match(error.details, /throttle/);
    }
    assert.equal(env.backends.a!.rpcs, reached, 'dropped RPCs never reach the backend');
  });

  it('drop_overloads at 50 % drops about half of the RPCs', async () => {
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [withDrops('echo', env.addresses('a'), [['half', 50]])],
    });
    const client = env.client();
    await waitForDistribution(client, 'some RPCs answered', (c) => c.has('a'));
    const counts = await sendRpcs(client, 1000);
    assert.equal((counts.get('a') ?? 0) + (counts.get(UNAVAILABLE) ?? 0), 1000, show(counts));
    // One standard deviation of 1000 draws at p = 0.5 is 1.6 %.
    assertShare(counts, UNAVAILABLE, 0.5, 0.07);
  });

  it('max_requests 2: of ten RPCs started in one tick against a hanging backend, exactly 2 reach it and 8 fail at once', async () => {
    env.serve({
      clusters: [
        { ...edsCluster('echo'), circuit_breakers: { thresholds: [{ max_requests: 2 }] } },
      ],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a') }])],
    });
    const client = env.client();
    await waitForAllOn(client, 'a', { concurrency: 1, batch: 5 }); // connected, configured
    const backend = env.backends.a!;
    backend.behaviour = 'hang';
    const before = backend.rpcs;
    const start = Date.now();
    const outcomes: (string | undefined)[] = Array(10).fill(undefined);
    const failedAt: number[] = [];
    const calls = Array.from({ length: 10 }, (_, i) =>
      sendRpc(client, { deadlineMs: 3000 }).then(
        (name) => (outcomes[i] = `answered by ${name}`),
        (e: grpc.ServiceError) => {
          outcomes[i] = `${grpc.status[e.code]}: ${e.details}`;
          failedAt.push(Date.now() - start);
        },
      ),
    );
    await waitUntil('8 RPCs failed', () => failedAt.length >= 8, 2000);
    await waitUntil('2 RPCs reached the backend', () => backend.rpcs - before >= 2, 2000);
    const failures = outcomes.filter((o) => o !== undefined);
    assert.equal(failures.length, 8, `8 failed, 2 hang: ${JSON.stringify(outcomes)}`);
    for (const failure of failures) {
      assert.match(failure!, /^UNAVAILABLE: .*max_concurrent_requests/);
    }
    assert.ok(Math.max(...failedAt) < 1000, `failed at once: after ${failedAt.join(', ')} ms`);
    assert.equal(backend.rpcs - before, 2, 'exactly 2 RPCs reached the backend');

    // The two hanging RPCs end (the backend goes away); their slots are free again.
    await backend.stop();
    await Promise.all(calls);
    backend.behaviour = 'answer';
    await backend.start();
    const counts = await waitForDistribution(
      client,
      'two concurrent RPCs answered after the hanging ones ended',
      (c) => c.get('a') === 2,
      { batch: 2, concurrency: 2 },
    );
    assert.equal(counts.get('a'), 2);
  });
});
