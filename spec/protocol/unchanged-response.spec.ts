// A re-sent response identical to the last ACKed one (a control plane's periodic push).
//
// 1. Its resources are not even looked at: watchers hear nothing, and each resource moves to
//    the new version.
// 2. It is processed in full when a name was subscribed since (it may now hold a wanted
//    resource), or when the previous response was NACKed (the NACK must be sent again).
// 3. A resource kept under ignore_resource_deletion stays marked as deleted.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { clusterResourceType, status, type ClusterUpdate, type ResourceType } from '../../lib';
import { edsCluster } from '../../lib/testing';
import { CDS, settled, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

describe('unchanged responses', () => {
  let env: Env;
  afterEach(() => env?.close());

  const counting = () => {
    // Counts every look at a resource's bytes: a full decode, or just reading its name.
    const type = {
      ...clusterResourceType,
      reads: 0,
      decode(bytes: Uint8Array, context: Parameters<typeof clusterResourceType.decode>[1]) {
        type.reads++;
        return clusterResourceType.decode(bytes, context);
      },
      peekName(bytes: Uint8Array) {
        type.reads++;
        return clusterResourceType.peekName!(bytes);
      },
    };
    return type as ResourceType<ClusterUpdate> & { reads: number };
  };

  it('an identical re-send is not decoded and moves versions on', async () => {
    env = await startEnv();
    const type = counting();
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watch(type, 'A', w);
    env.client.watch(type, 'B', new RecordingWatcher());
    await w.next('changed');
    await settled(env.server);
    const events: string[] = [];
    env.client.on('response', (e) => events.push(`response ${e.resourceCount}`));
    env.client.on('ack', (e) => events.push(`ack ${e.versionInfo}`));
    const reads = type.reads;

    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]); // same bytes, v2
    await settled(env.server);
    const v2 = env.server.responses.at(-1)!.versionInfo;
    assert.equal(type.reads, reads, 'no resource of the re-sent response was even looked at');
    assert.deepEqual(events, ['response 2', `ack ${v2}`]);
    assert.deepEqual(
      env.client.dump().map((d) => [d.name, d.status, d.version]),
      [
        ['A', 'ACKED', v2],
        ['B', 'ACKED', v2],
      ],
    );
    w.expectNothingYet(); // settled above: the client has answered the re-send
  });

  it('a re-send after a new subscription is processed in full', async () => {
    env = await startEnv();
    env.server.holdResponses('cluster'); // only the raw responses below reach the client
    const wa = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', wa);
    await env.server.waitForRequest((r) => r.typeUrl === CDS);
    const raw = {
      typeUrl: CDS,
      versionInfo: 'v1',
      resources: [
        { typeUrl: CDS, json: edsCluster('A') },
        { typeUrl: CDS, json: edsCluster('B') },
      ],
    };
    env.server.sendRaw(raw);
    await wa.next('changed');
    await settled(env.server);
    const wb = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('B', wb);
    await env.server.waitForRequest((r) => r.resourceNames.includes('B'));
    env.server.sendRaw({ ...raw, versionInfo: 'v2' }); // the very same resources
    assert.equal((await wb.next('changed')).resource.name, 'B');
    await wa.expectNothingUntil(settled(env.server));
  });

  it('a re-send of a nacked response is nacked again', async () => {
    env = await startEnv();
    env.server.setResources('cluster', [{ name: 'A', type: 'STATIC' }]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    await w.next('error');
    await settled(env.server);
    env.server.setResources('cluster', [{ name: 'A', type: 'STATIC' }]);
    const last = env.server.responses.at(-1)!;
    const reply = await env.server.waitForRequest((r) => r.responseNonce === last.nonce);
    assert.equal(reply.errorDetail?.code, status.INVALID_ARGUMENT);
  });

  it('a resource kept by ignore resource deletion stays marked deleted', async () => {
    env = await startEnv({ serverFeatures: ['ignore_resource_deletion'] });
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', w);
    env.client.watchCluster('B', new RecordingWatcher());
    await w.next('changed');
    env.server.setResources('cluster', [edsCluster('B')]);
    await w.next('ambient');
    await settled(env.server);
    const deletedVersion = env.client.dump().find((d) => d.name === 'A')!.version;
    env.server.setResources('cluster', [edsCluster('B')]); // identical re-send
    await w.expectNothingUntil(settled(env.server));
    const a = env.client.dump().find((d) => d.name === 'A')!;
    assert.equal(a.version, deletedVersion, 'A is not in the response: its version stays');
    // When A comes back, it is announced as back (status ACKED again, no notification).
    env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
    await settled(env.server);
    assert.equal(
      env.client.dump().find((d) => d.name === 'A')!.version,
      env.server.responses.at(-1)!.versionInfo,
    );
  });
});
