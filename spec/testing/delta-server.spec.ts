// xds-client/testing's ManagementServer over DeltaAggregatedResources: the same store as SotW
// (one bootstrap line switches a client's transport), every delta request recorded, held
// responses, and delta streams rejected or ended like SotW ones.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, XdsClient, type ClusterUpdate } from '../../lib';
import { edsCluster, ManagementServer } from '../../lib/testing';
import { TEST_BACKOFF } from '../helpers/constants';
import { CDS, settled } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

describe('ManagementServer: delta ADS', () => {
  let server: ManagementServer;
  const clients: XdsClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server?.close();
  });

  const client = (apiType: 'AGGREGATED_GRPC' | 'AGGREGATED_DELTA_GRPC' = 'AGGREGATED_GRPC') => {
    const c = new XdsClient({ bootstrap: server.bootstrap({ apiType }), backoff: TEST_BACKOFF });
    clients.push(c);
    return c;
  };

  it('serves sotw and delta clients from one store, switched by one bootstrap line', async () => {
    server = await ManagementServer.start();
    assert.equal(
      server.bootstrap({ apiType: 'AGGREGATED_DELTA_GRPC' }).xds_servers[0]!.api_type,
      'AGGREGATED_DELTA_GRPC',
    );
    server.setResources('cluster', [edsCluster('A')]);
    const sotw = new RecordingWatcher<ClusterUpdate>();
    const delta = new RecordingWatcher<ClusterUpdate>();
    client().watchCluster('A', sotw);
    client('AGGREGATED_DELTA_GRPC').watchCluster('A', delta);
    await sotw.next('changed');
    await delta.next('changed');
    server.setResource('cluster', edsCluster('A', { serviceName: 'v2' }));
    await sotw.next('changed');
    await delta.next('changed');
    assert.equal(server.streamCount, 2);
    assert.ok(server.requests.length > 0 && server.deltaRequests.length > 0);
    const recorded = server.deltaRequests[0]!;
    assert.equal(recorded.typeUrl, CDS);
    assert.deepEqual(recorded.resourceNamesSubscribe, ['A']);
    assert.ok(Object.isFrozen(recorded));
  });

  it('holds and releases delta responses', async () => {
    server = await ManagementServer.start();
    server.setResources('cluster', [edsCluster('A')]);
    server.holdResponses('cluster');
    const w = new RecordingWatcher<ClusterUpdate>();
    client('AGGREGATED_DELTA_GRPC').watchCluster('A', w);
    await server.waitForDeltaRequest((r) => r.resourceNamesSubscribe.includes('A'));
    assert.equal(server.responses.length, 0);
    server.releaseResponses('cluster');
    await w.next('changed');
    await settled(server);
    assert.equal(server.responses.length, 1);
  });

  it('rejects and ends delta streams like sotw ones', async () => {
    server = await ManagementServer.start();
    server.setResources('cluster', [edsCluster('A')]);
    server.setStreamFault({ endBeforeResponseWith: { code: status.PERMISSION_DENIED } });
    const c = client('AGGREGATED_DELTA_GRPC');
    const ended: (number | undefined)[] = [];
    c.on('disconnected', (e) => ended.push(e.error?.code));
    const w = new RecordingWatcher<ClusterUpdate>();
    c.watchCluster('A', w);
    const rejected = await w.next('error');
    assert.equal(rejected.error.code, status.UNAVAILABLE);
    assert.match(rejected.error.message, /PERMISSION_DENIED/);
    server.setStreamFault(undefined);
    await w.next('changed');
    const opened = server.streamsOpened;
    server.endStreams(status.INTERNAL);
    await server.waitForStreams(opened + 1);
    // Ended after a response: normal, nobody hears of it; the client is back on a new stream.
    await server.waitForDeltaRequest((r) => r.streamId === opened + 1);
    assert.deepEqual(ended, [status.UNAVAILABLE, undefined]);
    w.expectNothingYet();
  });
});
