// A proxyless mesh end to end (issue 12 as a whole): our management server configures both ends
// — an XdsServer with XdsServerCredentials whose Listener asks for mTLS and allows, by RBAC, one
// method to one authenticated identity, and two grpc-js clients on `xds:///mesh.test` with
// XdsChannelCredentials, each with its own identity from its own bootstrap. Certificates are
// made for the test and rotated by rewriting their files; the Listener goes away and comes back
// while an RPC is in flight.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import {
  BOOTSTRAP_OPTION,
  XdsChannelCredentials,
  XdsServer,
  XdsServerCredentials,
  register,
  type ServingStatus,
} from '../../../lib/grpc';
// Internal on purpose: no public view counts the plugin's pooled XdsClients, and none may leak.
import { openClientCount } from '../../../lib/grpc/client-pool';
import {
  ManagementServer,
  TestCertificateAuthority,
  edsCluster,
  endpoints,
  listener,
  rbacFilter,
  routeConfig,
  serverListener,
  writeCertificateFiles,
  type JsonObject,
} from '../../../lib/testing';
import { ECHO_PATH, waitUntil } from '../helpers/backends';
import {
  HELD_PATH,
  OTHER_PATH,
  SERVICE,
  bindLoopback,
  call,
  serviceHandlers,
} from '../helpers/xds-server-env';

const TEMPLATE = 'grpc/server?xds.resource.listening_address=%s';
const TARGET = 'mesh.test';
const SERVER_ID = 'spiffe://mesh.example/ns/prod/sa/echo';
const FRONTEND_ID = 'spiffe://mesh.example/ns/prod/sa/frontend';
const FRONTEND_NEXT_ID = 'spiffe://mesh.example/ns/prod/sa/frontend-next';
const INTRUDER_ID = 'spiffe://mesh.example/ns/dev/sa/intruder';

/** RBAC: `principals` may call Echo and Held; nothing else is allowed. */
function allowEcho(...principals: string[]): JsonObject {
  return {
    action: 'ALLOW',
    policies: {
      'echo-callers': {
        principals: principals.map((id) => ({
          authenticated: { principal_name: { exact: id } },
        })),
        permissions: [ECHO_PATH, HELD_PATH].map((path) => ({
          url_path: { path: { exact: path } },
        })),
      },
    },
  };
}

describe('a proxyless mesh: XdsServer + xDS credentials + RBAC', () => {
  let management: ManagementServer;
  let server: XdsServer;
  let statuses: ServingStatus[];
  let held: ((reply: string) => void)[];
  let channels: grpc.Client[];

  beforeEach(async () => {
    register();
    management = await ManagementServer.start();
    statuses = [];
    channels = [];
  });

  afterEach(async () => {
    for (const channel of channels) channel.close();
    server?.forceShutdown();
    await management.close();
    assert.equal(openClientCount(), 0);
  });

  it('authenticates and authorizes by identity, across rotation and a Listener that goes away', async () => {
    const ca = TestCertificateAuthority.create('mesh CA');
    const serverFiles = await writeCertificateFiles({
      identity: ca.issue({ uris: [SERVER_ID] }),
      ca: ca.certificate,
    });
    /** A bootstrap whose instance `workload` holds `files`, refreshed every 100 ms. */
    const bootstrapWith = (
      files: Awaited<ReturnType<typeof writeCertificateFiles>>,
      node: string,
    ) =>
      JSON.stringify(
        management.bootstrap({
          nodeId: node,
          serverListenerResourceNameTemplate: TEMPLATE,
          certificateProviders: { workload: { ...files, refreshInterval: '0.1s' } },
        }),
      );

    // The server: mTLS required, RBAC allowing the frontend to call Echo.
    server = new XdsServer({
      [BOOTSTRAP_OPTION]: bootstrapWith(serverFiles, 'echo'),
      onServingStatusUpdate: (_address, status) => statuses.push(status),
    });
    const handlers = serviceHandlers();
    held = handlers.held;
    server.addService(SERVICE, handlers.handlers);
    const port = await bindLoopback(
      server,
      new XdsServerCredentials(grpc.ServerCredentials.createInsecure()),
    );
    const address = `127.0.0.1:${port}`;
    const serverListenerName = TEMPLATE.replace('%s', address);
    const setServerListener = (rules: JsonObject) =>
      management.setResource(
        'listener',
        serverListener(serverListenerName, '127.0.0.1', port, {
          tls: {
            identityInstance: 'workload',
            caInstance: 'workload',
            requireClientCertificate: true,
          },
          httpFilters: [rbacFilter('authz', rules)],
        }),
      );
    setServerListener(allowEcho(FRONTEND_ID));

    // The clients' view: one cluster, mTLS with the server's identity checked.
    management.setResource('listener', listener(TARGET, 'routes'));
    management.setResource('route', routeConfig('routes', { cluster: 'echo' }));
    management.setResource(
      'cluster',
      edsCluster('echo', {
        tls: {
          caInstance: 'workload',
          identityInstance: 'workload',
          subjectAltNames: [{ exact: SERVER_ID }],
        },
      }),
    );
    management.setResource('endpoint', endpoints('echo', [{ addresses: [address] }]));

    const channel = (bootstrap: string, options: grpc.ChannelOptions = {}) => {
      const created = new grpc.Client(
        `xds:///${TARGET}`,
        new XdsChannelCredentials(grpc.credentials.createInsecure()),
        {
          [BOOTSTRAP_OPTION]: bootstrap,
          'grpc.initial_reconnect_backoff_ms': 100,
          'grpc.max_reconnect_backoff_ms': 200,
          ...options,
        },
      );
      channels.push(created);
      return created;
    };
    const workload = async (id: string, node: string) => {
      const files = await writeCertificateFiles({
        identity: ca.issue({ uris: [id] }),
        ca: ca.certificate,
      });
      const bootstrap = bootstrapWith(files, node);
      return { channel: channel(bootstrap), files, bootstrap };
    };
    const frontend = await workload(FRONTEND_ID, 'frontend');
    const intruder = await workload(INTRUDER_ID, 'intruder');

    // mTLS and RBAC: the frontend may call Echo only; the intruder, with a certificate of the
    // same CA, may call nothing.
    await waitUntil(
      'the frontend is served',
      async () => (await call(frontend.channel)) === 'served',
    );
    assert.deepEqual(statuses, [{ serving: true }]);
    assert.equal(await call(frontend.channel, OTHER_PATH), 'PERMISSION_DENIED');
    assert.equal(await call(intruder.channel), 'PERMISSION_DENIED');

    // Rotation: the frontend's certificate is rewritten with a new identity, nothing restarts.
    // A connection made from now on carries it (each probe is a new channel with a connection
    // of its own), and RBAC sees it; the connection made before keeps the identity it has.
    await writeCertificateFiles(
      { identity: ca.issue({ uris: [FRONTEND_NEXT_ID] }) },
      frontend.files.dir,
    );
    await waitUntil('a new connection carries the rotated identity', async () => {
      const probe = channel(frontend.bootstrap, { 'grpc.use_local_subchannel_pool': 1 });
      try {
        return (await call(probe)) === 'PERMISSION_DENIED';
      } finally {
        probe.close();
      }
    });
    assert.equal(await call(frontend.channel), 'served', 'the old connection is untouched');

    // The server's policy moves to the new identity (and lets the intruder in): the Listener
    // update drains the old connections, and the new ones are authorized by the new rules.
    setServerListener(allowEcho(FRONTEND_NEXT_ID, INTRUDER_ID));
    await waitUntil(
      'the intruder is allowed',
      async () => (await call(intruder.channel)) === 'served',
    );
    await waitUntil(
      'the rotated frontend is allowed',
      async () => (await call(frontend.channel)) === 'served',
    );
    assert.equal(await call(frontend.channel, OTHER_PATH), 'PERMISSION_DENIED');

    // The Listener goes away with an RPC in flight: it finishes; new RPCs are refused; the
    // Listener comes back and the port serves again.
    const inFlight = call(frontend.channel, HELD_PATH, 60_000);
    await waitUntil('the server has the RPC', () => held.length === 1);
    management.removeResource('listener', serverListenerName);
    await waitUntil('NOT_SERVING reported', () => statuses.at(-1)?.serving === false);
    await waitUntil(
      'new RPCs are refused',
      async () => (await call(frontend.channel)) === 'UNAVAILABLE',
    );
    held.shift()!('done');
    assert.equal(await inFlight, 'served', 'the RPC in flight finished');
    setServerListener(allowEcho(FRONTEND_NEXT_ID));
    await waitUntil('SERVING again', () => statuses.at(-1)?.serving === true);
    await waitUntil(
      'the frontend is served again',
      async () => (await call(frontend.channel)) === 'served',
    );
    assert.deepEqual(
      statuses.map((s) => s.serving),
      [true, false, true],
    );
  });
});
