// How large a response the xDS channel takes: 128 MiB by default, far above gRPC's 4 MiB (a
// large mesh's SotW responses are tens of MB), and a response over the limit is an error that
// names the limit and the option to raise it.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { ClusterUpdate } from '../../lib';
import { edsCluster } from '../../lib/testing';
import { startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

describe('response size', () => {
  let env: Env | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  it("a response over grpc's 4 MiB default is accepted", async () => {
    // 5 MB to encode, send and decode: on a loaded machine that can outlast the specs' 500 ms
    // does-not-exist timer, which is not what this spec is about.
    env = await startEnv({ resourceTimeoutMs: 10_000 });
    // One cluster of 5 MB: its EDS service name.
    const serviceName = 's'.repeat(5 * 1024 * 1024);
    env.server.setResources('cluster', [edsCluster('big', { serviceName })]);
    const watcher = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('big', watcher);
    const { resource: value } = await watcher.next('changed');
    assert.equal(value.type === 'EDS' && value.edsServiceName?.length, serviceName.length);
  });

  it('a response over the limit is an error naming the limit and the option', async () => {
    env = await startEnv({ channelOptions: { 'grpc.max_receive_message_length': 2000 } });
    env.server.setResources('cluster', [edsCluster('A', { serviceName: 'a'.repeat(3000) })]);
    const watcher = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('A', watcher);
    const error = await watcher.error();
    assert.match(
      error.message,
      /an xDS response of \d+ bytes is over the limit of 2000 bytes: raise the XdsClient option channelOptions\['grpc\.max_receive_message_length'\]/,
    );
  });
});
