// End to end (gRFC A36): an XdsServer serves only while the management server's Listener for
// its address says so, reports each change through onServingStatusUpdate, and serves only RPCs
// routed to a non_forwarding action. The client is plain grpc-js, with no xDS.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { BOOTSTRAP_OPTION, XdsServer, type ServingStatus } from '../../../lib/grpc';
// Internal on purpose: no public view counts the plugin's pooled XdsClients, and none may leak.
import { openClientCount } from '../../../lib/grpc/client-pool';
import { ManagementServer, routeConfig, serverListener } from '../../../lib/testing';
import { ECHO_PATH, newClient, waitUntil } from '../helpers/backends';
import {
  bindLoopback,
  call,
  OTHER_PATH,
  rpcError,
  SERVICE,
  serviceHandlers,
  UNROUTED_PATH,
} from '../helpers/xds-server-env';

const TEMPLATE = 'grpc/server?xds.resource.listening_address=%s';

describe('XdsServer (gRFC A36)', () => {
  let management: ManagementServer;
  let server: XdsServer;
  let client: grpc.Client;
  let statuses: ServingStatus[];
  let address: string;
  let port: number;
  let name: string;

  beforeEach(async () => {
    management = await ManagementServer.start();
    statuses = [];
    server = new XdsServer({
      [BOOTSTRAP_OPTION]: JSON.stringify(
        management.bootstrap({ serverListenerResourceNameTemplate: TEMPLATE }),
      ),
      onServingStatusUpdate: (at, status) => {
        assert.equal(at, address);
        statuses.push(status);
      },
    });
    server.addService(SERVICE, serviceHandlers().handlers);
    port = await bindLoopback(server);
    address = `127.0.0.1:${port}`;
    name = TEMPLATE.replace('%s', address);
    client = newClient(address);
  });

  afterEach(async () => {
    client.close();
    server.forceShutdown();
    await management.close();
    assert.equal(openClientCount(), 0, 'the XdsServer released its XdsClient');
  });

  const serving = (value: boolean) => () => statuses.at(-1)?.serving === value;

  it('refuses connections until its Listener arrives, then serves', async () => {
    assert.equal(await call(client), 'UNAVAILABLE');
    assert.deepEqual(statuses, []);
    // The server asked for exactly its Listener.
    await waitUntil('the server watches its Listener', () =>
      management.requests.some((r) => r.resourceNames.includes(name)),
    );
    management.setResource('listener', serverListener(name, '127.0.0.1', port));
    await waitUntil('SERVING reported', serving(true));
    await waitUntil('an RPC is served', async () => (await call(client)) === 'served');
    assert.deepEqual(statuses, [{ serving: true }]);
  });

  it('reports NOT_SERVING when the Listener is deleted, and serves again when the same one returns', async () => {
    const resource = serverListener(name, '127.0.0.1', port);
    management.setResource('listener', resource);
    await waitUntil('an RPC is served', async () => (await call(client)) === 'served');

    management.removeResource('listener', name);
    await waitUntil('NOT_SERVING reported', serving(false));
    assert.ok(statuses.at(-1)?.error instanceof Error, 'NOT_SERVING carries the reason');
    await waitUntil('RPCs fail', async () => (await call(client)) === 'UNAVAILABLE');

    // Byte for byte the Listener that was deleted.
    management.setResource('listener', resource);
    await waitUntil('SERVING reported again', serving(true));
    await waitUntil('RPCs are served again', async () => (await call(client)) === 'served');
    assert.deepEqual(
      statuses.map((s) => s.serving),
      [true, false, true],
    );
  });

  it('does not serve a Listener for another address, and says why', async () => {
    management.setResource('listener', serverListener(name, '127.0.0.1', port + 1));
    await waitUntil('NOT_SERVING reported', () => statuses.length > 0);
    assert.equal(statuses.length, 1);
    assert.equal(statuses[0]!.serving, false);
    assert.match(String(statuses[0]!.error?.message), /not 127\.0\.0\.1:/);
    assert.equal(await call(client), 'UNAVAILABLE');
  });

  it('reports NOT_SERVING for a NACKed Listener with nothing cached', async () => {
    management.setResource('listener', {
      ...serverListener(name, '127.0.0.1', port),
      address: { socket_address: { address: 'localhost', port_value: port } },
    });
    await waitUntil('NOT_SERVING reported', () => statuses.length > 0);
    assert.equal(statuses[0]!.serving, false);
    assert.match(String(statuses[0]!.error?.message), /not an IP address/);
    assert.equal(await call(client), 'UNAVAILABLE');
  });

  it('closes connections no filter chain matches', async () => {
    management.setResource(
      'listener',
      serverListener(name, '127.0.0.1', port, {
        filterChain: { filter_chain_match: { source_type: 'EXTERNAL' } },
      }),
    );
    await waitUntil('SERVING reported', serving(true));
    // The client is on loopback: no chain for it, and no default chain.
    assert.equal(await call(client), 'UNAVAILABLE');
  });

  it('serves RPCs routed to a non_forwarding action; other routes and no route fail with UNAVAILABLE', async () => {
    management.setResource(
      'listener',
      serverListener(name, '127.0.0.1', port, {
        routes: [
          { match: { path: ECHO_PATH }, non_forwarding_action: {} },
          { match: { path: OTHER_PATH }, route: { cluster: 'elsewhere' } },
        ],
      }),
    );
    await waitUntil('an RPC is served', async () => (await call(client)) === 'served');
    const forwarded = await rpcError(client, OTHER_PATH);
    assert.equal(forwarded.code, grpc.status.UNAVAILABLE);
    assert.match(forwarded.details, /non_forwarding/);
    const unrouted = await rpcError(client, UNROUTED_PATH);
    assert.equal(unrouted.code, grpc.status.UNAVAILABLE);
    assert.match(unrouted.details, /no route/);
  });

  it('waits for routes from RDS before serving', async () => {
    management.setResource(
      'listener',
      serverListener(name, '127.0.0.1', port, { routeConfigName: 'server-routes' }),
    );
    await waitUntil('the server watches its routes', () =>
      management.requests.some((r) => r.resourceNames.includes('server-routes')),
    );
    assert.deepEqual(statuses, []);
    management.setResource('route', {
      ...routeConfig('server-routes', { cluster: 'unused' }),
      virtual_hosts: [
        {
          name: 'vh',
          domains: ['*'],
          routes: [{ match: { prefix: '' }, non_forwarding_action: {} }],
        },
      ],
    });
    await waitUntil('SERVING reported', serving(true));
    await waitUntil('an RPC is served', async () => (await call(client)) === 'served');
  });

  it('keeps serving on the old chains until the routes of a changed Listener arrive', async () => {
    management.setResource('listener', serverListener(name, '127.0.0.1', port));
    await waitUntil('an RPC is served', async () => (await call(client)) === 'served');
    const mark = management.requests.length;
    management.setResource(
      'listener',
      serverListener(name, '127.0.0.1', port, { routeConfigName: 'later-routes' }),
    );
    await management.waitForRequest((r) => r.resourceNames.includes('later-routes'), {
      after: mark,
    });
    assert.equal(await call(client, OTHER_PATH), 'served', 'the old chains still serve');
    management.setResource('route', {
      name: 'later-routes',
      virtual_hosts: [
        {
          name: 'vh',
          domains: ['*'],
          routes: [{ match: { path: ECHO_PATH }, non_forwarding_action: {} }],
        },
      ],
    });
    await waitUntil(
      'the new routes apply',
      async () => (await call(client, OTHER_PATH)) !== 'served',
    );
    assert.equal(await call(client), 'served');
  });
});

describe('e2e: XdsServer port binding', () => {
  it('a listener name the template makes invalid fails the bind and releases everything', async () => {
    const management = await ManagementServer.start();
    try {
      // Over the 16 KiB a resource name may have: the watch refuses it inside listen's callback.
      const template = `${'x'.repeat(17 * 1024)}/%s`;
      const server = new XdsServer({
        [BOOTSTRAP_OPTION]: JSON.stringify(
          management.bootstrap({ serverListenerResourceNameTemplate: template }),
        ),
      });
      const error = await new Promise<Error | null>((resolve) =>
        server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e) => resolve(e)),
      );
      assert.match(String(error?.message), /resource name is \d+ bytes long/);
      assert.equal(openClientCount(), 0, 'the XdsServer released its XdsClient');
      server.forceShutdown();
    } finally {
      await management.close();
    }
  });
});
