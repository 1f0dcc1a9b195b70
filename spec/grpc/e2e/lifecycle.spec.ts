// End to end: a channel's xDS resources live as long as the channel (gRFC A71, the issue's
// "closed with the last one"): channels with one bootstrap share one XdsClient and its ADS
// stream; closing the last of them ends the stream, and nothing of the plugin is left running.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { edsCluster, endpoints } from '../../../lib/testing';
// Internal on purpose: the pooled-client count (no public view; none may leak) and a short
// failover timer (an option of ours, not public).
import { openClientCount } from '../../../lib/grpc/client-pool';
import { PRIORITY_FAILOVER_TIMEOUT_OPTION } from '../../../lib/grpc/lb/priority/priority';
import {
  startSilentServer,
  trackTimers,
  waitForResourcesBack,
  waitUntil,
  type TrackedTimer,
} from '../helpers/backends';
import { sendRpc, startXdsEnv, waitForAllOn, type XdsEnv } from '../helpers/xds-env';

/** Timers created from the plugin, the client and the cluster tree. */
const PLUGIN_FILES = /[\\/]lib[\\/](grpc|client|clusters|xds-client)/;

function isFailoverTimer(timer: TrackedTimer): boolean {
  return /[\\/]lib[\\/]grpc[\\/]lb[\\/]priority/.test(timer.stack);
}

/** Every tracked timer fired or was cleared (bounded); then stops tracking. */
async function noTimersLeft(timers: ReturnType<typeof trackTimers>): Promise<void> {
  try {
    await waitUntil(
      'every timer of the plugin fired or was cleared',
      () => timers.pending().length === 0,
      3000,
    ).catch((e: Error) => {
      const stacks = timers.pending().map((t) => t.stack);
      throw new Error(`${e.message}; still pending, created at:\n${stacks.join('\n\n')}`);
    });
  } finally {
    timers.stop();
  }
}

describe('e2e: channel lifecycle', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a']);
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a') }])],
    });
  });
  afterEach(() => env.close());

  it('closing the channel ends the ADS stream and leaves no active handle behind', async () => {
    const baseline = process.getActiveResourcesInfo();
    // The client's, the resolver's and the LB policies' timers, unref'd ones included.
    const timers = trackTimers(PLUGIN_FILES);
    const client = env.client();
    await waitForAllOn(client, 'a');
    assert.equal(env.server.streamCount, 1);
    assert.equal(openClientCount(), 1);

    client.close();
    await waitUntil('the ADS stream ended', () => env.server.streamCount === 0, 3000);
    assert.equal(openClientCount(), 0, 'the shared XdsClient is closed');
    await waitForResourcesBack(baseline, 3000);
    await noTimersLeft(timers);
  });

  it('closing a channel while its priority failover timer runs clears the timer', async () => {
    const silent = await startSilentServer();
    env.server.setResources('endpoint', [
      endpoints('echo', [
        { priority: 0, locality: { zone: 'z0' }, addresses: [`127.0.0.1:${silent.port}`] },
        { priority: 1, locality: { zone: 'z1' }, addresses: env.addresses('a') },
      ]),
    ]);
    const baseline = process.getActiveResourcesInfo();
    const timers = trackTimers(PLUGIN_FILES);
    const client = env.client({ [PRIORITY_FAILOVER_TIMEOUT_OPTION]: 60_000 });
    // An RPC makes the channel connect; it waits in the queue while priority 0 connects.
    const rpc = sendRpc(client, { deadlineMs: 5000 }).catch((e: Error) => e);
    await waitUntil(
      'the failover timer started',
      () => timers.pending().some(isFailoverTimer),
      3000,
    );
    client.close();
    const outcome = await rpc;
    assert.ok(outcome instanceof Error, 'the queued RPC ends with the channel');
    await waitUntil('the ADS stream ended', () => env.server.streamCount === 0, 3000);
    await silent.stop();
    await waitForResourcesBack(baseline, 3000);
    await noTimersLeft(timers);
  });

  it('channels with one bootstrap share one ADS stream, which ends with the last of them', async () => {
    const first = env.client();
    const second = env.client();
    await waitForAllOn(first, 'a');
    await waitForAllOn(second, 'a');
    assert.equal(env.server.streamsOpened, 1, 'one ADS stream for both channels');

    first.close();
    // The second channel still routes, on the same stream.
    assert.equal(await sendRpc(second), 'a');
    env.server.setResources('endpoint', [endpoints('echo', [{ addresses: env.addresses('a') }])]);
    assert.equal(await sendRpc(second), 'a');
    assert.equal(env.server.streamCount, 1);

    second.close();
    await waitUntil('the ADS stream ended', () => env.server.streamCount === 0, 3000);
    assert.equal(openClientCount(), 0);
  });
});
