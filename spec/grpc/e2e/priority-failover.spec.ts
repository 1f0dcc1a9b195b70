// End to end: failover between the priorities of one cluster's endpoints (gRFC A56): RPCs go to
// the highest priority that works, move down when it fails, and come back when it returns.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { edsCluster, endpoints } from '../../../lib/testing';
import { startSilentServer } from '../helpers/backends';
import {
  FAILOVER_TIMEOUT_MS,
  sendRpc,
  startXdsEnv,
  waitForAllOn,
  type XdsEnv,
} from '../helpers/xds-env';

describe('e2e: priority failover', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['p0', 'p1']);
  });
  afterEach(() => env.close());

  it("fails over to priority 1 when priority 0's backends are down, and back when they return", async () => {
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [
        endpoints('echo', [
          { priority: 0, locality: { zone: 'z0' }, addresses: env.addresses('p0') },
          { priority: 1, locality: { zone: 'z1' }, addresses: env.addresses('p1') },
        ]),
      ],
    });
    const client = env.client();
    await waitForAllOn(client, 'p0');

    await env.backends.p0!.stop();
    await waitForAllOn(client, 'p1');

    await env.backends.p0!.start();
    await waitForAllOn(client, 'p0');
  });

  it('fails over when priority 0 stays CONNECTING past the failover timeout', async () => {
    const silent = await startSilentServer();
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [
        endpoints('echo', [
          { priority: 0, locality: { zone: 'z0' }, addresses: [`127.0.0.1:${silent.port}`] },
          { priority: 1, locality: { zone: 'z1' }, addresses: env.addresses('p1') },
        ]),
      ],
    });
    const client = env.client();
    const start = Date.now();
    // Queued while priority 0 connects (not failed), then answered by priority 1.
    assert.equal(await sendRpc(client, { deadlineMs: 5000 }), 'p1');
    const elapsed = Date.now() - start;
    assert.ok(
      elapsed >= FAILOVER_TIMEOUT_MS * 0.8,
      `answered after ${elapsed} ms, before the ${FAILOVER_TIMEOUT_MS} ms failover timeout`,
    );
    await waitForAllOn(client, 'p1');
  });
});
