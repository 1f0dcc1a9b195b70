// State-of-the-world deletion.
//
// 1. A cached Cluster missing from a CDS response is deleted: NOT_FOUND, cache dropped.
// 2. If it comes back with the very same bytes, it is announced again.
// 3. ClusterLoadAssignments are not all-required: one missing from a response is kept.
// 4. With ignore_resource_deletion (gRFC A53) the deleted Cluster is kept, watchers get one
//    ambient error, and its return restores the status without a new notification.
// 1, 2 and 4 hold on delta streams too (where the server lists the Cluster in
// removed_resources); 3 is SotW's alone (delta removes endpoints explicitly: delta.spec.ts).
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, type ClusterUpdate, type EndpointUpdate } from '../../lib';
import { edsCluster, endpoints } from '../../lib/testing';
import {
  API_TYPES,
  CDS,
  PER_TYPE_API_TYPES,
  isSotw,
  settled,
  startEnv as startSotwEnv,
  type Env,
} from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

// The per-type transports run the same scenarios: one bootstrap line apart.
for (const apiType of [...API_TYPES, ...PER_TYPE_API_TYPES])
  describe(`deletion (${apiType})`, () => {
    let env: Env;
    afterEach(() => env?.close());
    const startEnv = (options: Parameters<typeof startSotwEnv>[0] = {}) =>
      startSotwEnv({ ...options, apiType });
    // Not defined at all on delta, rather than reported as skipped.
    const sotwOnly = isSotw(apiType) ? it : ((() => undefined) as unknown as typeof it);
    /** Clusters A and B served, each watched and delivered. */
    async function watchedAB() {
      env = await startEnv();
      env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
      const wa = new RecordingWatcher<ClusterUpdate>();
      const wb = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('A', wa);
      env.client.watchCluster('B', wb);
      await wa.next('changed');
      await wb.next('changed');
      return { wa, wb };
    }

    it('a cluster missing from a response is deleted', async () => {
      const { wa, wb } = await watchedAB();
      env.server.setResources('cluster', [edsCluster('B')]);
      const { error } = await wa.next('error');
      assert.equal(error.code, status.NOT_FOUND);
      assert.match(error.message, /Cluster "A" does not exist/);
      await wb.expectNothingUntil(settled(env.server));
      const a = env.client.dump().find((d) => d.name === 'A')!;
      assert.equal(a.status, 'DOES_NOT_EXIST');
      assert.equal(a.cached, false);
    });

    sotwOnly('a cluster missing from a response is deleted whatever else it names', async () => {
      const { wa } = await watchedAB();
      // As many resources as cached entries, and more, but A not among them.
      env.server.sendRaw({
        typeUrl: CDS,
        resources: [
          { typeUrl: CDS, json: edsCluster('B') },
          { typeUrl: CDS, json: edsCluster('B') },
          { typeUrl: CDS, json: edsCluster('C') },
        ],
      });
      const { error } = await wa.next('error');
      assert.equal(error.code, status.NOT_FOUND);
      assert.match(error.message, /Cluster "A" does not exist/);
    });

    it('a deleted cluster that comes back byte-identical is announced again', async () => {
      env = await startEnv();
      env.server.setResources('cluster', [edsCluster('A')]);
      const w = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('A', w);
      await w.next('changed');
      env.server.setResources('cluster', []);
      await w.next('error');
      env.server.setResources('cluster', [edsCluster('A')]);
      assert.equal((await w.next('changed')).resource.name, 'A');
    });

    sotwOnly('endpoints missing from a response are kept', async () => {
      env = await startEnv();
      env.server.setResources('endpoint', [
        endpoints('A', [{ addresses: ['127.0.0.1:8001'] }]),
        endpoints('B', [{ addresses: ['127.0.0.1:8002'] }]),
      ]);
      const wa = new RecordingWatcher<EndpointUpdate>();
      const wb = new RecordingWatcher<EndpointUpdate>();
      env.client.watchEndpoints('A', wa);
      env.client.watchEndpoints('B', wb);
      await wa.next('changed');
      await wb.next('changed');
      env.server.setResources('endpoint', [endpoints('B', [{ addresses: ['127.0.0.1:8003'] }])]);
      await wb.next('changed');
      await wa.expectNothingUntil(settled(env.server));
      assert.equal(env.client.dump().find((d) => d.name === 'A')!.cached, true);
    });

    it('with ignore resource deletion a deleted cluster is kept', async () => {
      env = await startEnv({ serverFeatures: ['ignore_resource_deletion'] });
      env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
      const w = new RecordingWatcher<ClusterUpdate>();
      env.client.watchCluster('A', w);
      env.client.watchCluster('B', new RecordingWatcher());
      await w.next('changed');
      env.server.setResources('cluster', [edsCluster('B')]);
      const { error } = await w.next('ambient');
      assert.equal(error.code, status.NOT_FOUND);
      assert.match(error.message, /ignore_resource_deletion/);
      const kept = env.client.dump().find((d) => d.name === 'A')!;
      assert.equal(kept.cached, true);
      // A88: the cache entry says the resource does not exist, and still holds it (so CSDS does).
      assert.equal(kept.status, 'DOES_NOT_EXIST');
      // A second response without it says nothing more.
      env.server.setResources('cluster', [edsCluster('B', { serviceName: 'b2' })]);
      await w.expectNothingUntil(settled(env.server));
      // It comes back unchanged: no new notification, the status is ACKED again.
      env.server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
      await w.expectNothingUntil(settled(env.server));
      assert.equal(env.client.dump().find((d) => d.name === 'A')!.status, 'ACKED');
    });
  });
