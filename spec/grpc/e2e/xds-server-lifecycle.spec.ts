// End to end (gRFC A36): what an XdsServer does to RPCs already in flight when its Listener
// changes or goes away (they finish; new connections follow the new Listener), how long it
// lets them run (drainGraceTimeMs), a Listener that never arrives (the does-not-exist timer),
// and xdstp: server Listener names.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import {
  BOOTSTRAP_OPTION,
  RESOURCE_TIMEOUT_OPTION,
  XdsServer,
  type ServingStatus,
  type XdsServerOptions,
} from '../../../lib/grpc';
// Internal on purpose: no public view counts the plugin's pooled XdsClients, and none may leak.
import { openClientCount } from '../../../lib/grpc/client-pool';
import { ManagementServer, serverListener, type BootstrapOptions } from '../../../lib/testing';
import { ECHO_PATH, newClient, waitUntil } from '../helpers/backends';
import {
  bindLoopback,
  call,
  HELD_PATH,
  OTHER_PATH,
  SERVICE,
  serviceHandlers,
} from '../helpers/xds-server-env';

const TEMPLATE = 'grpc/server?xds.resource.listening_address=%s';

interface Setup {
  management: ManagementServer;
  server: XdsServer;
  client: grpc.Client;
  statuses: ServingStatus[];
  /** Answers of Held RPCs the server has received and not yet answered. */
  held: ((reply: string) => void)[];
  port: number;
  name: string;
}

describe('XdsServer across Listener changes (gRFC A36)', () => {
  let setup: Setup | undefined;

  afterEach(async () => {
    if (!setup) return;
    setup.client.close();
    setup.server.forceShutdown();
    await setup.management.close();
    setup = undefined;
    assert.equal(openClientCount(), 0, 'the XdsServer released its XdsClient');
  });

  async function start(
    options: Partial<XdsServerOptions> = {},
    bootstrap: BootstrapOptions = {},
    template = TEMPLATE,
  ): Promise<Setup> {
    const management = await ManagementServer.start();
    const statuses: ServingStatus[] = [];
    const server = new XdsServer({
      [BOOTSTRAP_OPTION]: JSON.stringify(
        management.bootstrap({ serverListenerResourceNameTemplate: template, ...bootstrap }),
      ),
      onServingStatusUpdate: (_address, status) => statuses.push(status),
      ...options,
    });
    const { handlers, held } = serviceHandlers();
    server.addService(SERVICE, handlers);
    const port = await bindLoopback(server);
    const client = newClient(`127.0.0.1:${port}`);
    const name = template.replace('%s', `127.0.0.1:${port}`);
    setup = { management, server, client, statuses, held, port, name };
    return setup;
  }

  /**
   * Starts a Held RPC and resolves once the server's handler has it, with its outcome (in an
   * object: an async function returning a promise would wait for it).
   */
  async function heldRpc(s: Setup): Promise<{ outcome: Promise<string> }> {
    const before = s.held.length;
    const outcome = call(s.client, HELD_PATH, 60_000);
    await waitUntil('the server has the RPC', () => s.held.length > before);
    return { outcome };
  }

  const serving = (s: Setup, value: boolean) => () => s.statuses.at(-1)?.serving === value;

  it('lets an RPC in flight finish when the Listener changes, while new RPCs follow the new one', async () => {
    const s = await start();
    s.management.setResource('listener', serverListener(s.name, '127.0.0.1', s.port));
    await waitUntil('an RPC is served', async () => (await call(s.client)) === 'served');
    const { outcome: inFlight } = await heldRpc(s);

    // The new Listener routes only Echo: Other no longer has a route.
    s.management.setResource(
      'listener',
      serverListener(s.name, '127.0.0.1', s.port, {
        routes: [{ match: { path: ECHO_PATH }, non_forwarding_action: {} }],
      }),
    );
    await waitUntil(
      'new RPCs use the new Listener',
      async () => (await call(s.client, OTHER_PATH)) === 'UNAVAILABLE',
    );
    s.held.shift()!('finished');
    assert.equal(await inFlight, 'served', 'the RPC accepted under the old Listener finished');
    assert.equal(await call(s.client), 'served');
    assert.deepEqual(s.statuses, [{ serving: true }], 'a change is not a serving transition');
  });

  it('lets an RPC in flight finish when the Listener is deleted, and refuses new ones', async () => {
    const s = await start();
    s.management.setResource('listener', serverListener(s.name, '127.0.0.1', s.port));
    await waitUntil('an RPC is served', async () => (await call(s.client)) === 'served');
    const { outcome: inFlight } = await heldRpc(s);

    s.management.removeResource('listener', s.name);
    await waitUntil('NOT_SERVING reported', serving(s, false));
    await waitUntil('new RPCs fail', async () => (await call(s.client)) === 'UNAVAILABLE');
    s.held.shift()!('finished');
    assert.equal(await inFlight, 'served', 'the drained connection finished its RPC');
  });

  it('cancels RPCs still running when drainGraceTimeMs is over', async () => {
    const s = await start({ drainGraceTimeMs: 50 });
    s.management.setResource('listener', serverListener(s.name, '127.0.0.1', s.port));
    await waitUntil('an RPC is served', async () => (await call(s.client)) === 'served');
    const { outcome: inFlight } = await heldRpc(s);

    s.management.removeResource('listener', s.name);
    // Never released: the grace time ends it.
    const outcome = await inFlight;
    assert.notEqual(outcome, 'served');
    assert.notEqual(outcome, 'DEADLINE_EXCEEDED', 'ended by the drain, not by its deadline');
  });

  it('reports NOT_SERVING when its Listener does not exist (the does-not-exist timer)', async () => {
    const s = await start({ [RESOURCE_TIMEOUT_OPTION]: 50 });
    await waitUntil('NOT_SERVING reported', () => s.statuses.length > 0);
    assert.equal(s.statuses.length, 1);
    assert.equal(s.statuses[0]!.serving, false);
    assert.match(String(s.statuses[0]!.error?.message), /does not exist/);
    assert.equal(await call(s.client), 'UNAVAILABLE');

    // It arrives late: the port serves.
    s.management.setResource('listener', serverListener(s.name, '127.0.0.1', s.port));
    await waitUntil('SERVING reported', serving(s, true));
    await waitUntil('an RPC is served', async () => (await call(s.client)) === 'served');
  });

  it('fetches an xdstp: Listener name from its authority', async () => {
    const template =
      'xdstp://server.example/envoy.config.listener.v3.Listener/grpc/server/%s?role=in';
    const s = await start({}, { authorities: ['server.example'] }, template);
    // '127.0.0.1:PORT' has only path characters: it is used as it is.
    assert.equal(
      s.name,
      `xdstp://server.example/envoy.config.listener.v3.Listener/grpc/server/127.0.0.1:${s.port}?role=in`,
    );
    await waitUntil('the server watches its xdstp: Listener', () =>
      s.management.requests.some((r) => r.resourceNames.includes(s.name)),
    );
    s.management.setResource('listener', serverListener(s.name, '127.0.0.1', s.port));
    await waitUntil('SERVING reported', serving(s, true));
    assert.equal(await call(s.client), 'served');
  });
});
