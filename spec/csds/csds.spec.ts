// CSDS (gRFC A40, A71, A88): addCsdsService on a real grpc-js server reports what real clients
// hold — the Node they send, every resource with its status, version, update time and bytes as
// received, a NACK's rejected version and reason — asked through a real grpc-js channel.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { addCsdsService, type ClusterUpdate, type XdsClient } from '../../lib';
import { messageCodec } from '../../lib/codec';
import {
  ClientResourceStatus,
  type ClientConfig,
  type ClientStatusResponse,
} from '../../lib/generated/protos';
import { BOOTSTRAP_OPTION, register } from '../../lib/grpc';
import { edsCluster, listener } from '../../lib/testing';
import { EXPIRY_TIMEOUT_MS } from '../helpers/constants';
import { CDS, LDS, settled, startEnv, type Env } from '../helpers/env';
import { RecordingWatcher } from '../helpers/recording-watcher';

const SERVICE = '/envoy.service.status.v3.ClientStatusDiscoveryService';
const request = messageCodec('envoy.service.status.v3.ClientStatusRequest');
const response = messageCodec('envoy.service.status.v3.ClientStatusResponse');
const clusterCodec = messageCodec('envoy.config.cluster.v3.Cluster');

const encodeRequest = (r: Record<string, unknown>) =>
  Buffer.from(request.encode(request.fromObject(r)));
const decodeResponse = (b: Buffer) => response.decode(b);

/** A CSDS server for `clients` on 127.0.0.1 and a plain grpc-js client of it. */
async function startCsds(clients?: Parameters<typeof addCsdsService>[1] | 'admin') {
  const server = new grpc.Server();
  if (clients === 'admin') grpc.addAdminServicesToServer(server);
  else if (clients === undefined) addCsdsService(server);
  else addCsdsService(server, clients);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  const channel = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const fetch = (body: Record<string, unknown> = {}) =>
    new Promise<ClientStatusResponse>((resolve, reject) =>
      channel.makeUnaryRequest(
        `${SERVICE}/FetchClientStatus`,
        encodeRequest,
        decodeResponse,
        body,
        (e, r) => (e ? reject(e) : resolve(r!)),
      ),
    );
  return {
    fetch,
    stream: () =>
      channel.makeBidiStreamRequest<Record<string, unknown>, ClientStatusResponse>(
        `${SERVICE}/StreamClientStatus`,
        encodeRequest,
        decodeResponse,
      ),
    close() {
      channel.close();
      server.forceShutdown();
    },
  };
}

type Csds = Awaited<ReturnType<typeof startCsds>>;

function entry(config: ClientConfig, typeUrl: string, name: string) {
  const found = config.genericXdsConfigs.find((c) => c.typeUrl === typeUrl && c.name === name);
  assert.ok(found, `${typeUrl} ${name} reported`);
  return found;
}

describe('CSDS', () => {
  let env: Env | undefined;
  let csds: Csds | undefined;
  afterEach(async () => {
    csds?.close();
    csds = undefined;
    await env?.close();
    env = undefined;
  });

  /** The versions of the response that was accepted, then of the one NACKed. */
  let accepted = '';
  let rejected = '';

  /** Cluster `good` ACKed, `bad` NACKed over a cached good version, `missing` asked for. */
  async function clientWithThreeClusters(): Promise<XdsClient> {
    env = await startEnv();
    env.server.setResources('cluster', [edsCluster('good'), edsCluster('bad')]);
    const good = new RecordingWatcher<ClusterUpdate>();
    const bad = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('good', good);
    env.client.watchCluster('bad', bad);
    env.client.watchCluster('missing', new RecordingWatcher<ClusterUpdate>());
    await good.next('changed');
    await bad.next('changed');
    await settled(env.server);
    accepted = env.server.responses.at(-1)!.versionInfo;
    env.server.setResources('cluster', [
      edsCluster('good'),
      { ...edsCluster('bad'), type: 'STATIC' },
    ]);
    await bad.next('ambient');
    await settled(env.server);
    rejected = env.server.responses.at(-1)!.versionInfo;
    assert.notEqual(accepted, rejected);
    return env.client;
  }

  it('csds reports node status version and bytes of every resource', async () => {
    const client = await clientWithThreeClusters();
    csds = await startCsds([client]);
    const before = Date.now();
    const { config } = await csds.fetch();
    assert.equal(config.length, 1);
    const [one] = config as [ClientConfig];
    assert.equal(one.node?.id, 'spec-node');
    assert.match(String(one.node?.userAgentName), /xds-client/);
    assert.equal(one.clientScope, '', 'a client the application made has no scope');

    const good = entry(one, CDS, 'good');
    assert.equal(good.clientStatus, ClientResourceStatus.ACKED);
    // Applied from the NACKed response too (A46): its version is that response's.
    assert.equal(good.versionInfo, rejected);
    assert.equal(good.xdsConfig?.type_url, CDS);
    assert.equal(clusterCodec.decode(good.xdsConfig!.value).name, 'good', 'the bytes as received');
    const updated = Number(good.lastUpdated!.seconds) * 1000;
    assert.ok(updated <= before && updated > before - 60_000, 'last_updated is when it came');
    assert.equal(good.errorState, null);

    const missing = entry(one, CDS, 'missing');
    assert.equal(missing.clientStatus, ClientResourceStatus.REQUESTED);
    assert.equal(missing.xdsConfig, null);
  });

  it('csds reports a nack with the rejected version and reason over the cached one', async () => {
    const client = await clientWithThreeClusters();
    csds = await startCsds([client]);
    const [one] = (await csds.fetch()).config as [ClientConfig];
    const bad = entry(one, CDS, 'bad');
    assert.equal(bad.clientStatus, ClientResourceStatus.NACKED);
    assert.equal(bad.versionInfo, accepted, 'the version in use is the one cached');
    const EDS_TYPE = 3;
    assert.equal(clusterCodec.decode(bad.xdsConfig!.value).type, EDS_TYPE, 'the cached cluster');
    assert.equal(bad.errorState?.versionInfo, rejected);
    assert.match(String(bad.errorState?.details), /bad/);
    assert.match(String(bad.errorState?.details), /type/, 'the field path of the problem');
    assert.ok(bad.errorState?.lastUpdateAttempt, 'when it was rejected');
  });

  it('csds reports timeout for a timer fired on a resource_timer_is_transient_error server', async () => {
    env = await startEnv({
      serverFeatures: ['resource_timer_is_transient_error'],
      resourceTimeoutMs: EXPIRY_TIMEOUT_MS,
    });
    const slow = new RecordingWatcher<ClusterUpdate>();
    env.client.watchCluster('slow', slow);
    await slow.next('error');
    csds = await startCsds([env.client]);
    const { config } = await csds.fetch();
    const reported = entry(config[0]!, CDS, 'slow');
    assert.equal(reported.clientStatus, ClientResourceStatus.TIMEOUT);
    assert.equal(reported.xdsConfig, null);
  });

  it('csds exclude resource contents leaves the bytes out', async () => {
    const client = await clientWithThreeClusters();
    csds = await startCsds([client]);
    const [one] = (await csds.fetch({ excludeResourceContents: true })).config as [ClientConfig];
    const good = entry(one, CDS, 'good');
    assert.equal(good.clientStatus, ClientResourceStatus.ACKED);
    assert.equal(good.xdsConfig, null);
  });

  it('csds refuses node matchers with invalid argument', async () => {
    const client = await clientWithThreeClusters();
    csds = await startCsds([client]);
    await assert.rejects(csds.fetch({ nodeMatchers: [{}] }), (e: grpc.ServiceError) => {
      assert.equal(e.code, grpc.status.INVALID_ARGUMENT);
      assert.match(e.details, /node_matchers/);
      return true;
    });
  });

  it('csds stream answers every request', async () => {
    const client = await clientWithThreeClusters();
    csds = await startCsds(() => [client]);
    const call = csds.stream();
    const answers: ClientStatusResponse[] = [];
    const two = new Promise<void>((resolve, reject) => {
      call.on('data', (r: ClientStatusResponse) => {
        answers.push(r);
        if (answers.length === 1) {
          // A change between two requests shows in the second answer.
          client.watchCluster('later', new RecordingWatcher<ClusterUpdate>());
          call.write({});
        }
        if (answers.length === 2) resolve();
      });
      call.on('error', reject);
    });
    call.write({});
    await two;
    call.end();
    assert.equal(answers[0]!.config[0]!.genericXdsConfigs.length, 3);
    assert.equal(answers[1]!.config[0]!.genericXdsConfigs.length, 4);
    await new Promise<void>((resolve) => call.on('status', () => resolve()));
  });

  it('csds reports every open client of the process by default with its scope', async () => {
    await clientWithThreeClusters();
    env!.newClient({ bootstrap: env!.server.bootstrap({ nodeId: 'second' }) });
    const closed = env!.newClient({ bootstrap: env!.server.bootstrap({ nodeId: 'closed' }) });
    closed.close();
    // A channel of the grpc plugin: its shared client is reported with its target's scope.
    register();
    env!.server.setResource('listener', listener('svc', 'routes'));
    const channel = new grpc.Client('xds:///svc', grpc.credentials.createInsecure(), {
      [BOOTSTRAP_OPTION]: JSON.stringify(env!.server.bootstrap({ nodeId: 'channel' })),
    } as grpc.ChannelOptions);
    try {
      channel.getChannel().getConnectivityState(true);
      await env!.server.waitForRequest((r) => r.node?.id === 'channel');
      csds = await startCsds();
      const { config } = await csds.fetch();
      const byNode = new Map(config.map((c) => [c.node!.id, c]));
      assert.deepEqual([...byNode.keys()].sort(), ['channel', 'second', 'spec-node']);
      assert.equal(byNode.get('channel')!.clientScope, 'xds:///');
      assert.equal(byNode.get('second')!.genericXdsConfigs.length, 0);
      assert.ok(
        byNode.get('channel')!.genericXdsConfigs.some((c) => c.typeUrl === LDS && c.name === 'svc'),
      );
    } finally {
      channel.close();
    }
  });

  it('csds is among grpc js admin services once the plugin is registered', async () => {
    await clientWithThreeClusters();
    register();
    csds = await startCsds('admin');
    const { config } = await csds.fetch();
    assert.equal(config.length, 1);
    assert.equal(config[0]!.genericXdsConfigs.length, 3);
  });
});
