// `xds-client csds`: a real command process asks a real service's CSDS (addCsdsService on a
// grpc-js server in this process, over a client holding ACKed and NACKed resources).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { addCsdsService, type ClusterUpdate } from '../../lib';
import { edsCluster } from '../../lib/testing';
import { settled, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';
import { oneErrorLine, runCli } from './helpers';

describe('xds-client csds', () => {
  let env: Env;
  let service: grpc.Server;
  let address: string;

  before(async () => {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('good'), edsCluster('bad')]);
    const bad = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('good', new RecordingWatcher<ClusterUpdate>());
    env.client.watchCluster('bad', bad);
    await bad.next('changed');
    env.server.setResources('cluster', [
      edsCluster('good'),
      { ...edsCluster('bad'), type: 'STATIC' },
    ]);
    await bad.next('ambient');
    await settled(env.server);
    service = new grpc.Server();
    addCsdsService(service, [env.client]);
    const port = await new Promise<number>((resolve, reject) =>
      service.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    address = `127.0.0.1:${port}`;
  });

  after(async () => {
    service.forceShutdown();
    await env.close();
  });

  it('prints each client and one line per resource, with a NACK’s reason', async () => {
    const result = await runCli(['csds', '--server', address]);
    assert.equal(result.stderr, '');
    assert.equal(result.code, 0);
    const lines = result.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^client spec-node {2}2 resources$/);
    assert.match(lines[1]!, /^ {2}CDS {2}bad {2}NACKED {2}version \S+ {2}\d{4}-\d\d-\d\dT/);
    assert.match(lines[2]!, /^ +rejected version \S+ .*bad.*type/);
    assert.match(lines[3]!, /^ {2}CDS {2}good {2}ACKED {2}version /);
    assert.equal(lines.length, 4);
  });

  it('--json prints the response with each resource decoded', async () => {
    const result = await runCli(['csds', '--server', address, '--json']);
    assert.equal(result.code, 0);
    const answer = JSON.parse(result.stdout) as {
      config: { node: { id: string }; genericXdsConfigs: Record<string, unknown>[] }[];
    };
    assert.equal(answer.config[0]!.node.id, 'spec-node');
    const good = answer.config[0]!.genericXdsConfigs.find((c) => c['name'] === 'good')!;
    assert.equal(good['clientStatus'], 'ACKED');
    const cluster = good['xdsConfig'] as Record<string, unknown>;
    assert.equal(cluster['@type'], 'type.googleapis.com/envoy.config.cluster.v3.Cluster');
    assert.equal(cluster['name'], 'good');
    assert.equal(cluster['type'], 'EDS');
    assert.match(String(good['lastUpdated']), /^\d{4}-\d\d-\d\dT.*Z$/);
  });

  it('exits 3 with one line when nothing answers', async () => {
    const closed = new grpc.Server();
    const port = await new Promise<number>((resolve, reject) =>
      closed.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    closed.forceShutdown();
    const result = await runCli(['csds', '--server', `127.0.0.1:${port}`, '--timeout', '2000']);
    assert.equal(result.code, 3);
    assert.match(oneErrorLine(result.stderr), /CSDS at 127\.0\.0\.1:\d+: (UNAVAILABLE|DEADLINE)/);
  });

  it('exits 1 when the server has no CSDS', async () => {
    const plain = new grpc.Server();
    const port = await new Promise<number>((resolve, reject) =>
      plain.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    try {
      const result = await runCli(['csds', '--server', `127.0.0.1:${port}`]);
      assert.equal(result.code, 1);
      assert.match(oneErrorLine(result.stderr), /UNIMPLEMENTED/);
    } finally {
      plain.forceShutdown();
    }
  });
});
