// Federation (gRFC A47): xdstp names go to their authority's server, with sorted parameters.
//
// 1. An xdstp name whose authority has its own server is requested there, not on the default.
// 2. Its context parameters are sorted, so two spellings share one subscription.
// 3. An authority missing from the bootstrap gives onResourceError at once.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { status, XdsClient, type ClusterUpdate } from '../../lib';
import { parseResourceName } from '../../lib/client/cache/resource-name';
import { edsCluster, ManagementServer } from '../../lib/testing';
import { TEST_RESOURCE_TIMEOUT_MS } from '../helpers/constants';
import { RecordingWatcher } from '../helpers/recording-watcher';

const CDS_PATH = 'envoy.config.cluster.v3.Cluster';

describe('federation', () => {
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  it('canonical names sort context parameters', () => {
    const a = parseResourceName(`xdstp://auth.example/${CDS_PATH}/c1?b=2&a=1`);
    const b = parseResourceName(`xdstp://auth.example/${CDS_PATH}/c1?a=1&b=2`);
    assert.equal(a.authority, 'auth.example');
    assert.equal(a.canonical, b.canonical);
    assert.equal(a.canonical, `xdstp://auth.example/${CDS_PATH}/c1?a=1&b=2`);
    assert.deepEqual(parseResourceName('plain-name'), {
      authority: undefined,
      canonical: 'plain-name',
    });
  });

  it('an xdstp name is requested from its authoritys server', async () => {
    const main = await ManagementServer.start();
    const other = await ManagementServer.start();
    cleanup.push(
      () => main.close(),
      () => other.close(),
    );
    const name = `xdstp://other.example/${CDS_PATH}/c1?b=2&a=1`;
    const canonical = `xdstp://other.example/${CDS_PATH}/c1?a=1&b=2`;
    other.setResources('cluster', [edsCluster(canonical, { serviceName: 'c1-eds' })]);
    const bootstrap = main.bootstrap({ nodeId: 'fed' }) as Record<string, unknown>;
    bootstrap.authorities = {
      'other.example': {
        xds_servers: [{ server_uri: other.address, channel_creds: [{ type: 'insecure' }] }],
      },
    };
    const client = new XdsClient({ bootstrap, resourceTimeoutMs: TEST_RESOURCE_TIMEOUT_MS });
    cleanup.push(() => client.close());
    const w1 = new RecordingWatcher<ClusterUpdate>();
    const w2 = new RecordingWatcher<ClusterUpdate>();
    client.watchCluster(name, w1);
    client.watchCluster(`xdstp://other.example/${CDS_PATH}/c1?a=1&b=2`, w2);
    assert.equal((await w1.next('changed')).resource.name, canonical);
    await w2.next('changed');
    assert.deepEqual(other.requests[0]!.resourceNames, [canonical]);
    assert.equal(main.requests.length, 0);
  });

  it('an authority missing from the bootstrap is an error at once', async () => {
    const main = await ManagementServer.start();
    cleanup.push(() => main.close());
    const client = new XdsClient({ bootstrap: main.bootstrap() });
    cleanup.push(() => client.close());
    const w = new RecordingWatcher<ClusterUpdate>();
    client.watchCluster(`xdstp://nowhere.example/${CDS_PATH}/c1`, w);
    const { error } = await w.next('error', 200);
    assert.equal(error.code, status.INVALID_ARGUMENT);
    assert.match(error.message, /authority "nowhere.example" is not in the bootstrap/);
    // a name that is not even well-formed is the same kind of error, never a throw
    const bad = new RecordingWatcher<ClusterUpdate>();
    client.watchCluster(`xdstp://a%zz/${CDS_PATH}/c1`, bad);
    assert.equal((await bad.next('error', 200)).error.code, status.INVALID_ARGUMENT);
  });
});
