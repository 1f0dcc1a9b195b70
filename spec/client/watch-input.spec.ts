// What `watch()` refuses, and how: a name that cannot go on the wire is an error at once, and
// a name the bootstrap cannot serve is an error delivered to the watcher like any other,
// contained if the watcher throws.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { isXdsError, status, XdsClient, type ClusterUpdate } from '../../lib';
import { edsCluster, ManagementServer } from '../../lib/testing';
import { RecordingWatcher } from '../helpers/recording-watcher';

const CDS_PATH = 'envoy.config.cluster.v3.Cluster';

describe('watch() input', () => {
  let server: ManagementServer | undefined;
  let client: XdsClient | undefined;
  afterEach(async () => {
    client?.close();
    await server?.close();
  });

  async function start(): Promise<XdsClient> {
    server = await ManagementServer.start();
    return (client = new XdsClient({ bootstrap: server.bootstrap({ nodeId: 'spec-node' }) }));
  }

  function refusal(watch: () => unknown): Error {
    try {
      watch();
    } catch (e) {
      assert.ok(isXdsError(e), `not an XdsError: ${String(e)}`);
      assert.equal(e.code, status.INVALID_ARGUMENT);
      return e;
    }
    assert.fail('the watch was accepted');
  }

  it('names that cannot go on the wire are refused and other watches go on', async () => {
    const c = await start();
    server!.setResources('cluster', [edsCluster('ok')]);
    const w = new RecordingWatcher<ClusterUpdate>();
    assert.match(
      refusal(() => c.watchCluster(42 as unknown as string, w)).message,
      /Cluster: resource name must be a string \(got 42\)/,
    );
    assert.match(
      refusal(() => c.watchCluster('bad\uD800name', w)).message,
      /lone UTF-16 surrogate at index 3/,
    );
    assert.match(
      refusal(() => c.watchCluster('x'.repeat(3 * 1024 * 1024), w)).message,
      /resource name is 3145728 bytes long; at most 16384 are allowed/,
    );
    // A well-formed pair is fine, and nothing above reached the wire.
    c.watchCluster('ok', w);
    assert.equal((await w.next('changed')).resource.name, 'ok');
    for (const request of server!.requests) {
      assert.deepEqual(request.resourceNames, ['ok']);
    }
  });

  it('a watcher that throws on an unknown authority is contained', async () => {
    const c = await start();
    const uncaught: unknown[] = [];
    const record = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', record);
    try {
      const name = `xdstp://nowhere.example/${CDS_PATH}/c1`;
      c.watchCluster(name, {
        onResourceChanged() {},
        onResourceError() {
          throw new Error('watcher bug (expected in this spec)');
        },
      });
      const w = new RecordingWatcher<ClusterUpdate>();
      c.watchCluster(name, w);
      const { error } = await w.next('error');
      assert.match(error.message, /authority "nowhere.example" is not in the bootstrap/);
      assert.equal(error.nodeId, 'spec-node');
      assert.match(error.message, /^\[xDS node id: spec-node\]: /);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(uncaught, []);
    } finally {
      process.off('uncaughtException', record);
    }
  });
});
