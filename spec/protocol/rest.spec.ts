// REST-JSON polling (api_type REST; the protocol document's "REST-JSON polling subscriptions")
// against the ManagementServer's REST endpoints on 127.0.0.1: each poll a POSTed proto3-JSON
// DiscoveryRequest with the node and the last accepted version, 304 for no change, a NACK sent
// once with the last accepted version, new names polled at once, an unreachable server a
// connectivity error. REST requests are in the server's request log with streamId 0.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, XdsClient, type ClusterUpdate } from '../../lib';
import { ManagementServer, edsCluster, type BootstrapOptions } from '../../lib/testing';
import { RecordingWatcher } from '../helpers/recording-watcher';

const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const REST = 0;

describe('REST-JSON polling', () => {
  let server: ManagementServer | undefined;
  let client: XdsClient | undefined;
  afterEach(async () => {
    client?.close();
    await server?.close();
    client = undefined;
    server = undefined;
  });

  async function start(options: BootstrapOptions = {}) {
    server = await ManagementServer.start();
    client = new XdsClient({
      bootstrap: server.bootstrap({ apiType: 'REST', refreshDelay: '0.05s', ...options }),
    });
    return { server, client };
  }

  /** The next REST request for clusters after the `after`-th request of the log. */
  const nextPoll = (s: ManagementServer, after: number) =>
    s.waitForRequest((r) => r.streamId === REST && r.typeUrl === CDS, { after });

  it('rest polls with the node and delivers the answer', async () => {
    const { server: s, client: c } = await start();
    s.setResources('cluster', [edsCluster('A')]);
    const watcher = new RecordingWatcher<ClusterUpdate>();
    c.watchCluster('A', watcher);
    const { resource } = await watcher.next('changed');
    assert.equal(resource.name, 'A');
    const first = s.requests.find((r) => r.streamId === REST)!;
    assert.equal(first.node?.id, 'test-node');
    assert.deepEqual(first.resourceNames, ['A']);
    assert.equal(first.versionInfo, '');
    assert.ok(s.restUrl.startsWith('http://127.0.0.1:'));
  });

  it('rest carries the accepted version and a 304 changes nothing', async () => {
    const { server: s, client: c } = await start();
    s.setResources('cluster', [edsCluster('A')]);
    const watcher = new RecordingWatcher<ClusterUpdate>();
    c.watchCluster('A', watcher);
    await watcher.next('changed');
    const version = s.responses.at(-1)!.versionInfo;
    // The following polls carry the accepted version: answered 304, nothing delivered.
    const logged = s.requests.length;
    const poll = await s.waitForRequest((r) => r.streamId === REST && r.versionInfo === version, {
      after: logged,
    });
    assert.equal(poll.node?.id, 'test-node', 'every poll carries the node');
    await nextPoll(s, s.requests.length);
    watcher.expectNothingYet();
    // A change is delivered by the next poll.
    s.setResources('cluster', [edsCluster('A', { serviceName: 'next' })]);
    const { resource } = await watcher.next('changed');
    assert.equal(resource.type === 'EDS' && resource.edsServiceName, 'next');
  });

  it('rest sends a nack once with the last accepted version', async () => {
    const { server: s, client: c } = await start();
    s.setResources('cluster', [edsCluster('A')]);
    const watcher = new RecordingWatcher<ClusterUpdate>();
    c.watchCluster('A', watcher);
    await watcher.next('changed');
    const accepted = s.responses.at(-1)!.versionInfo;
    s.setResources('cluster', [{ ...edsCluster('A'), type: 'STATIC' }]);
    await watcher.next('ambient');
    const nack = await s.waitForRequest((r) => r.streamId === REST && r.errorDetail !== undefined);
    assert.equal(nack.versionInfo, accepted, 'the last accepted version');
    assert.match(nack.errorDetail!.message, /Cluster "A": type/);
    // The polls after it do not repeat it.
    const after = s.requests.indexOf(nack) + 1;
    const later = await nextPoll(s, after);
    assert.equal(later.errorDetail, undefined);
    assert.equal(later.versionInfo, accepted);
    // The server keeps answering with the rejected version: it is not NACKed again.
    await nextPoll(s, s.requests.indexOf(later) + 1);
    watcher.expectNothingYet();
    assert.equal(s.requests.filter((r) => r.errorDetail !== undefined).length, 1);
    // A fixed version is delivered.
    s.setResources('cluster', [edsCluster('A', { serviceName: 'fixed' })]);
    const { resource } = await watcher.next('changed');
    assert.equal(resource.type === 'EDS' && resource.edsServiceName, 'fixed');
  });

  it('rest polls new names at once with no version', async () => {
    // A poll period far longer than the spec: only the immediate poll can deliver B.
    const { server: s, client: c } = await start({ refreshDelay: '60s' });
    s.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
    const a = new RecordingWatcher<ClusterUpdate>();
    c.watchCluster('A', a);
    await a.next('changed');
    const b = new RecordingWatcher<ClusterUpdate>();
    c.watchCluster('B', b);
    const { resource } = await b.next('changed');
    assert.equal(resource.name, 'B');
    const poll = s.requests.find((r) => r.streamId === REST && r.resourceNames.includes('B'))!;
    assert.equal(poll.versionInfo, '', 'a full answer, whatever the version');
  });

  it('rest an unreachable server is a connectivity error', async () => {
    const dead = await ManagementServer.start();
    const bootstrap = dead.bootstrap({ apiType: 'REST' });
    await dead.close();
    client = new XdsClient({ bootstrap });
    const watcher = new RecordingWatcher<ClusterUpdate>();
    client.watchCluster('A', watcher);
    const error = await watcher.error();
    assert.equal(error.code, status.UNAVAILABLE);
    assert.match(error.message, /REST http:\/\/127\.0\.0\.1:\d+\/v3\/discovery:clusters/);
  });
});
