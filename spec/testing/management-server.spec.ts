// The test management server speaks state-of-the-world ADS as go-control-plane does, and its
// fault hooks do what they say. Each spec drives it with a bare grpc-js client:
//   1. start a server on 127.0.0.1 and set resources;
//   2. open a raw ADS stream and write DiscoveryRequests by hand;
//   3. check the responses on the wire and the server's request/response logs.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { status } from '@grpc/grpc-js';
import { loadBootstrap } from '../../lib';
import {
  CLUSTER_TYPE_URL as CDS,
  ENDPOINT_TYPE_URL as EDS,
  ManagementServer,
  edsCluster,
  endpoints,
} from '../../lib/testing';
import { until } from '../helpers/wait';
import { AdsTestClient, resourceNames } from './ads-test-client';

const FOO = 'type.googleapis.com/test.v1.Foo';

describe('ManagementServer', () => {
  const servers: ManagementServer[] = [];
  const clients: AdsTestClient[] = [];

  async function start(): Promise<ManagementServer> {
    const server = await ManagementServer.start();
    servers.push(server);
    return server;
  }

  function connect(server: ManagementServer): AdsTestClient {
    const client = AdsTestClient.open(server.address);
    clients.push(client);
    return client;
  }

  /** A server with clusters A and B, and a client subscribed to `names`, past the first response. */
  async function subscribed(names: readonly string[]) {
    const server = await start();
    server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
    const client = connect(server);
    client.send({ typeUrl: CDS, resourceNames: names, nodeId: 'n' });
    const first = await client.next();
    return { server, client, first };
  }

  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  describe('protocol', () => {
    it('first request gets current version and the requested resources that exist', async () => {
      const { server, first } = await subscribed(['A', 'X']);
      assert.match(server.address, /^127\.0\.0\.1:\d+$/);
      assert.equal(first.typeUrl, CDS);
      assert.equal(first.versionInfo, '1');
      assert.notEqual(first.nonce, '');
      assert.deepEqual(resourceNames(first), ['A']);
      assert.equal(first.resources[0]!.type_url, CDS);
      assert.deepEqual(server.responses, [
        {
          streamId: 1,
          typeUrl: CDS,
          versionInfo: '1',
          nonce: first.nonce,
          resourceNames: ['A'],
          sentAt: server.responses[0]!.sentAt,
        },
      ]);
      const [request] = server.requests;
      assert.equal(request!.streamId, 1);
      assert.deepEqual(request!.resourceNames, ['A', 'X']);
      assert.equal(request!.node?.id, 'n');
      assert.equal(request!.errorDetail, undefined);
    });

    it('first request with no names is a wildcard subscription', async () => {
      const { first } = await subscribed([]);
      assert.deepEqual(resourceNames(first), ['A', 'B']);
    });

    it('types never set are served empty at version 0', async () => {
      const server = await start();
      const client = connect(server);
      client.send({ typeUrl: EDS, resourceNames: ['A'] });
      const response = await client.next();
      assert.equal(response.versionInfo, '0');
      assert.equal(response.resources.length, 0);
    });

    it('ack gets nothing', async () => {
      const { server, client, first } = await subscribed(['A']);
      client.ack(first, ['A']);
      await client.expectNoResponse(server);
    });

    it('nack with unchanged names gets nothing and is logged', async () => {
      const { server, client, first } = await subscribed(['A']);
      client.send({
        typeUrl: CDS,
        resourceNames: ['A'],
        versionInfo: '',
        responseNonce: first.nonce,
        errorDetail: { code: status.INVALID_ARGUMENT, message: 'bad A' },
      });
      const nack = await server.waitForRequest((r) => r.errorDetail !== undefined);
      assert.deepEqual(nack.errorDetail, { code: status.INVALID_ARGUMENT, message: 'bad A' });
      await client.expectNoResponse(server);
    });

    it('subscription change gets a response', async () => {
      const { client, first } = await subscribed(['A']);
      client.ack(first, ['A', 'B']);
      const next = await client.next();
      assert.equal(next.versionInfo, '1');
      assert.notEqual(next.nonce, first.nonce);
      assert.deepEqual(resourceNames(next), ['A', 'B']);
    });

    it('dropping every name gets nothing', async () => {
      const { server, client, first } = await subscribed(['A']);
      client.ack(first, []);
      await client.expectNoResponse(server);
    });

    it('set resources pushes a new version to streams subscribed to that type', async () => {
      const { server, client, first } = await subscribed(['A']);
      const other = connect(server);
      other.send({ typeUrl: EDS, resourceNames: ['A'] });
      await other.next();
      client.ack(first, ['A']);
      server.setResources('cluster', [edsCluster('A', { serviceName: 'a2' })]);
      const pushed = await client.next();
      assert.equal(pushed.versionInfo, '2');
      assert.deepEqual(resourceNames(pushed), ['A']);
      await other.expectNoResponse(server);
    });

    it('set resource and remove resource push too', async () => {
      const { server, client } = await subscribed(['A', 'B']);
      server.setResource('cds', edsCluster('A', { serviceName: 'a2' }));
      assert.equal((await client.next()).versionInfo, '2');
      server.removeResource('cluster', 'B');
      const removed = await client.next();
      assert.equal(removed.versionInfo, '3');
      assert.deepEqual(resourceNames(removed), ['A']);
    });

    it('request with a stale nonce is ignored', async () => {
      const { server, client, first } = await subscribed(['A']);
      server.setResources('cluster', [edsCluster('A'), edsCluster('B')]);
      const pushed = await client.next();
      // Written before the client saw the push: the server must not act on it.
      client.ack(first, ['A', 'B']);
      await server.waitForRequest(
        (r) => r.responseNonce === first.nonce && r.resourceNames.length === 2,
      );
      await client.expectNoResponse(server);
      client.ack(pushed, ['A', 'B']);
      assert.deepEqual(resourceNames(await client.next()), ['A', 'B']);
    });

    it('unknown type urls are recorded and not answered', async () => {
      const server = await start();
      const client = connect(server);
      client.send({ typeUrl: FOO, resourceNames: ['x'] });
      await server.waitForRequest((r) => r.typeUrl === FOO);
      await client.expectNoResponse(server);
    });

    it('types set with a full type url are served as given', async () => {
      const server = await start();
      server.setResources(FOO, [{ name: 'x', bytes: Uint8Array.of(1, 2, 3) }]);
      const client = connect(server);
      client.send({ typeUrl: FOO, resourceNames: ['x', 'y'] });
      const response = await client.next();
      assert.equal(response.resources.length, 1);
      assert.equal(response.resources[0]!.type_url, FOO);
      assert.deepEqual([...response.resources[0]!.value], [1, 2, 3]);
    });

    it('streams are counted and numbered', async () => {
      const server = await start();
      const a = connect(server);
      const b = connect(server);
      a.send({ typeUrl: CDS, resourceNames: ['A'] });
      b.send({ typeUrl: CDS, resourceNames: ['A'] });
      assert.equal(await server.waitForStreams(2), 2);
      assert.equal(server.streamCount, 2);
      a.close();
      await until('stream count to drop to 1', () => server.streamCount === 1);
      assert.equal(server.streamsOpened, 2);
    });
  });

  describe('faults', () => {
    it('hold responses answers nothing and release sends what is due', async () => {
      const server = await start();
      server.setResources('cluster', [edsCluster('A')]);
      server.holdResponses('cluster');
      const client = connect(server);
      client.send({ typeUrl: CDS, resourceNames: ['A'] });
      client.send({ typeUrl: EDS, resourceNames: ['A'] });
      assert.equal((await client.next()).typeUrl, EDS);
      server.setResources('cluster', [edsCluster('A', { serviceName: 'a2' })]);
      await client.expectNoResponse(server);
      assert.equal(server.requests.filter((r) => r.typeUrl === CDS).length, 1);
      server.releaseResponses('cluster');
      const released = await client.next();
      assert.equal(released.versionInfo, '2');
      await client.expectNoResponse(server);
    });

    it('hold responses all holds every type until each is released', async () => {
      const server = await start();
      server.holdResponses();
      const client = connect(server);
      client.send({ typeUrl: CDS, resourceNames: ['A'] });
      client.send({ typeUrl: EDS, resourceNames: ['A'] });
      await client.expectNoResponse(server);
      server.releaseResponses('endpoint');
      assert.equal((await client.next()).typeUrl, EDS);
      await client.expectNoResponse(server);
      server.releaseResponses();
      assert.equal((await client.next()).typeUrl, CDS);
    });

    it('end streams ends every open stream with the status', async () => {
      const server = await start();
      const a = connect(server);
      const b = connect(server);
      a.send({ typeUrl: CDS, resourceNames: ['A'] });
      b.send({ typeUrl: CDS, resourceNames: ['A'] });
      await server.waitForStreams(2);
      server.endStreams(status.UNAVAILABLE, 'restart');
      assert.equal(server.streamCount, 0);
      for (const client of [a, b]) {
        const ended = await client.status();
        assert.equal(ended.code, status.UNAVAILABLE);
        assert.equal(ended.details, 'restart');
      }
    });

    it('stream fault ends new streams after their first request before any response', async () => {
      const { server, client } = await subscribed(['A']);
      server.setStreamFault({ endBeforeResponseWith: { code: status.INTERNAL, details: 'boom' } });
      const failing = connect(server);
      failing.send({ typeUrl: CDS, resourceNames: ['A'] });
      const ended = await failing.status();
      assert.equal(ended.code, status.INTERNAL);
      assert.equal(ended.details, 'boom');
      assert.equal(failing.pending.length, 0);
      assert.equal(server.requests.filter((r) => r.streamId === 2).length, 1);
      // The stream that was open before is untouched.
      server.setResources('cluster', [edsCluster('A', { serviceName: 'a2' })]);
      assert.equal((await client.next()).versionInfo, '2');
      server.setStreamFault(undefined);
      const healthy = connect(server);
      healthy.send({ typeUrl: CDS, resourceNames: ['A'] });
      assert.equal((await healthy.next()).versionInfo, '2');
    });

    it('send raw delivers crafted resources as they are', async () => {
      const { server, client, first } = await subscribed(['A']);
      const garbage = Uint8Array.of(0x0a, 0xff, 0xff);
      server.sendRaw({
        typeUrl: CDS,
        resources: [
          { typeUrl: CDS, json: edsCluster('A') },
          { typeUrl: CDS, json: edsCluster('A') },
          { typeUrl: EDS, json: endpoints('A', []) },
          { typeUrl: CDS, value: garbage },
        ],
      });
      const raw = await client.next();
      assert.notEqual(raw.nonce, first.nonce);
      assert.equal(raw.versionInfo, '1');
      assert.deepEqual(
        raw.resources.map((r) => r.type_url),
        [CDS, CDS, EDS, CDS],
      );
      assert.deepEqual([...raw.resources[3]!.value], [...garbage]);
      assert.deepEqual(server.responses.at(-1)!.resourceNames, ['A', 'A', 'A', '']);
      assert.equal(server.responses.at(-1)!.nonce, raw.nonce);
      // Its nonce is the stream's latest: a NACK of it that changes names is answered.
      client.send({
        typeUrl: CDS,
        resourceNames: ['A', 'B'],
        versionInfo: '1',
        responseNonce: raw.nonce,
        errorDetail: { code: status.INVALID_ARGUMENT, message: 'duplicate A' },
      });
      assert.deepEqual(resourceNames(await client.next()), ['A', 'B']);
    });

    it('send raw to one stream with a chosen version and nonce', async () => {
      const { server, client } = await subscribed(['A']);
      const other = connect(server);
      other.send({ typeUrl: CDS, resourceNames: ['A'] });
      await other.next();
      const nonces = server.sendRaw(
        { typeUrl: CDS, versionInfo: 'v9', nonce: 'n9', resources: [] },
        2,
      );
      assert.deepEqual(nonces, ['n9']);
      const raw = await other.next();
      assert.equal(raw.versionInfo, 'v9');
      assert.equal(raw.nonce, 'n9');
      await client.expectNoResponse(server);
      assert.throws(
        () => server.sendRaw({ typeUrl: CDS, resources: [] }, 7),
        /stream 7 is not open/,
      );
    });
  });

  describe('waiting', () => {
    it('wait for request resolves with a request already received', async () => {
      const { server } = await subscribed(['A']);
      const request = await server.waitForRequest((r) => r.typeUrl === CDS);
      assert.equal(request, server.requests[0]);
    });

    it('wait for request resolves with a future request', async () => {
      const { server, client, first } = await subscribed(['A']);
      const waiting = server.waitForRequest((r) => r.responseNonce === first.nonce);
      client.ack(first, ['A']);
      assert.equal((await waiting).versionInfo, '1');
    });

    it('wait for request after an index ignores earlier requests', async () => {
      const { server, client, first } = await subscribed(['A']);
      const mark = server.requests.length;
      const waiting = server.waitForRequest((r) => r.typeUrl === CDS, { after: mark });
      client.ack(first, ['A']);
      assert.equal(await waiting, server.requests[mark]);
    });

    it('wait for request rejects on timeout listing the last requests', async () => {
      const { server } = await subscribed(['A']);
      await assert.rejects(
        server.waitForRequest((r) => r.typeUrl === EDS, { timeoutMs: 50 }),
        {
          message:
            'waitForRequest: no matching request within 50 ms; the last 1 of 1 requests:\n' +
            '  #0 stream 1 cluster version="" nonce="" names=["A"]',
        },
      );
    });

    it('waits pending at close are rejected', async () => {
      const server = await start();
      const waiting = server.waitForStreams(1, { timeoutMs: 5000 });
      await server.close();
      await assert.rejects(waiting, /management server closed/);
    });
  });

  describe('bootstrap and lifecycle', () => {
    it('bootstrap points at the server with insecure creds', async () => {
      const server = await start();
      const bootstrap = server.bootstrap({
        serverFeatures: ['ignore_resource_deletion'],
        authorities: ['a.example.com'],
      });
      assert.deepEqual(bootstrap, {
        xds_servers: [
          {
            server_uri: server.address,
            channel_creds: [{ type: 'insecure' }],
            server_features: ['ignore_resource_deletion'],
          },
        ],
        node: { id: 'test-node' },
        authorities: { 'a.example.com': {} },
      });
      const loaded = loadBootstrap(bootstrap);
      assert.equal(loaded.xdsServers[0]!.serverUri, server.address);
      assert.equal(loaded.xdsServers[0]!.ignoreResourceDeletion, true);
      assert.equal(server.bootstrap({ nodeId: 'other' }).node.id, 'other');
    });

    it('close ends streams with unavailable is idempotent and frees the port', async () => {
      const server = await start();
      const client = connect(server);
      client.send({ typeUrl: CDS, resourceNames: ['A'] });
      await client.next();
      const port = Number(server.address.split(':')[1]);
      await Promise.all([server.close(), server.close()]);
      await server.close();
      assert.equal((await client.status()).code, status.UNAVAILABLE);
      await new Promise<void>((resolve, reject) => {
        const probe = createServer();
        probe.once('error', reject);
        probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
      });
      const again = await ManagementServer.start({ port });
      servers.push(again);
      assert.equal(again.address, `127.0.0.1:${port}`);
    });
  });
});
