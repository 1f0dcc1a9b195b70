// The example of docs/testing.md works as written: a ManagementServer bootstraps an XdsClient,
// serves it a cluster, and sees the ACK.
//   1. start a server, and a client from server.bootstrap();
//   2. set a cluster and watch it: the watcher gets it;
//   3. the server receives the ACK of version "1";
//   4. a cluster the server does not have gets NOT_FOUND after a short timeout, on a client
//      given one for that test alone (docs/testing.md: only a test that waits for the timer
//      shortens it, since a loaded machine can delay a response past 500 ms).
import { afterEach, beforeEach, it } from 'node:test';
import assert from 'node:assert/strict';
import { XdsClient, status, type ClusterUpdate, type XdsError } from '../../lib';
import { ManagementServer, edsCluster } from '../../lib/testing';

let server: ManagementServer;
let client: XdsClient;

beforeEach(async () => {
  server = await ManagementServer.start();
  client = new XdsClient({ bootstrap: server.bootstrap() });
});

afterEach(async () => {
  client.close();
  await server.close();
});

it('the documented example gets a cluster and the server sees the ack', async () => {
  server.setResources('cluster', [edsCluster('A', { serviceName: 'A-eds' })]);
  const cluster = await new Promise<ClusterUpdate>((resolve, reject) => {
    client.watchCluster('A', { onResourceChanged: resolve, onResourceError: reject });
  });
  assert.equal(cluster.type === 'EDS' && cluster.edsServiceName, 'A-eds');
  const ack = await server.waitForRequest((r) => r.versionInfo === '1' && r.responseNonce !== '');
  assert.deepEqual(ack.resourceNames, ['A']);
  assert.equal(server.requests[0]!.node?.id, 'test-node');
});

it('a cluster the server lacks is not found after the short timeout', async () => {
  const short = new XdsClient({ bootstrap: server.bootstrap(), resourceTimeoutMs: 500 });
  const started = Date.now();
  const error = await new Promise<XdsError>((resolve, reject) => {
    short.watchCluster('missing', { onResourceChanged: reject, onResourceError: resolve });
  }).finally(() => short.close());
  assert.equal(error.code, status.NOT_FOUND);
  // Far above 500 ms, for a busy machine, and still far below the 15 s default.
  assert.ok(Date.now() - started < 10_000, 'the 500 ms timer applied, not the 15 s default');
});
