// End to end (gRFC A29): our management server, an XdsServer with XdsServerCredentials and a
// grpc-js client on `xds:///…` with XdsChannelCredentials, both taking their certificates from
// file_watcher providers over certificates made for the test. The server's handler answers with
// the client certificate's SANs, so each spec sees which identity the server authenticated.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import {
  BOOTSTRAP_OPTION,
  XdsChannelCredentials,
  XdsServer,
  XdsServerCredentials,
  register,
} from '../../../lib/grpc';
// Internal on purpose: no public view counts pooled XdsClients or certificate providers, and
// none may leak.
import { openClientCount } from '../../../lib/grpc/client-pool';
import { openProviderCount } from '../../../lib/grpc/certificates/provider-store';
import {
  ManagementServer,
  TestCertificateAuthority,
  edsCluster,
  downstreamTlsTransportSocket,
  endpoints,
  listener,
  routeConfig,
  serverListener,
  writeCertificateFiles,
  type CertificateFiles,
  type DownstreamTlsOptions,
  type JsonObject,
  type UpstreamTlsOptions,
} from '../../../lib/testing';
import { waitUntil } from '../helpers/backends';
import {
  PEER_ECHO_HANDLERS,
  PEER_ECHO_SERVICE,
  peerCall,
  ROTATION_WAIT_MS,
  securityClient,
} from '../helpers/peer-echo';

const TEMPLATE = 'grpc/server?xds.resource.listening_address=%s';
const SERVICE = 'secure.test';
const SERVER_SAN = 'spiffe://test.example/server';
const CLIENT_SAN = 'spiffe://test.example/client';

const call = (client: grpc.Client) => peerCall(client);

describe('xDS credentials (gRFC A29)', () => {
  let management: ManagementServer;
  let server: XdsServer;
  let clients: grpc.Client[];
  let ca: TestCertificateAuthority;
  let serverFiles: CertificateFiles & { dir: string };
  let clientFiles: CertificateFiles & { dir: string };
  let bootstrap: string;
  let port: number;
  let serving: boolean;

  beforeEach(async () => {
    register();
    management = await ManagementServer.start();
    ca = TestCertificateAuthority.create();
    serverFiles = await writeCertificateFiles({
      identity: ca.issue({ uris: [SERVER_SAN], dns: ['localhost'] }),
      ca: ca.certificate,
    });
    clientFiles = await writeCertificateFiles({
      identity: ca.issue({ uris: [CLIENT_SAN] }),
      ca: ca.certificate,
    });
    bootstrap = JSON.stringify(
      management.bootstrap({
        serverListenerResourceNameTemplate: TEMPLATE,
        certificateProviders: {
          server: { ...serverFiles, refreshInterval: '0.1s' },
          client: { ...clientFiles, refreshInterval: '0.1s' },
        },
      }),
    );
    clients = [];
  });

  afterEach(async () => {
    for (const client of clients) client.close();
    server?.forceShutdown();
    await management.close();
    assert.equal(openClientCount(), 0, 'every XdsClient released');
    // Subchannels are released a moment after their channel closes.
    await waitUntil('every certificate provider released', () => openProviderCount() === 0);
  });

  /** Starts the XdsServer on 127.0.0.1 with `credentials`. */
  async function startServer(credentials: grpc.ServerCredentials): Promise<void> {
    serving = false;
    server = new XdsServer({
      [BOOTSTRAP_OPTION]: bootstrap,
      onServingStatusUpdate: (_address, status) => (serving = status.serving),
    });
    server.addService(PEER_ECHO_SERVICE, PEER_ECHO_HANDLERS);
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', credentials, (e, p) => (e ? reject(e) : resolve(p))),
    );
  }

  /** The server's Listener (with `tls` on its chain) and the client's resources. */
  function serve(options: { serverTls?: DownstreamTlsOptions; clientTls?: UpstreamTlsOptions }) {
    const address = `127.0.0.1:${port}`;
    management.setResource(
      'listener',
      serverListener(TEMPLATE.replace('%s', address), '127.0.0.1', port, {
        ...(options.serverTls ? { tls: options.serverTls } : {}),
      }),
    );
    management.setResource('listener', listener(SERVICE, 'routes'));
    management.setResource('route', routeConfig('routes', { cluster: 'backend' }));
    setCluster(options.clientTls);
    management.setResource('endpoint', endpoints('backend', [{ addresses: [address] }]));
  }

  function setCluster(tls: UpstreamTlsOptions | undefined): void {
    const cluster: JsonObject = edsCluster('backend', tls ? { tls } : {});
    management.setResource('cluster', cluster);
  }

  function client(credentials: grpc.ChannelCredentials): grpc.Client {
    const created = securityClient(`xds:///${SERVICE}`, bootstrap, credentials);
    clients.push(created);
    return created;
  }

  const xdsChannelCredentials = () => new XdsChannelCredentials(grpc.credentials.createInsecure());
  const xdsServerCredentials = () =>
    new XdsServerCredentials(grpc.ServerCredentials.createInsecure());
  const mtls = { identityInstance: 'server', caInstance: 'server', requireClientCertificate: true };
  const clientMtls = (san: string): UpstreamTlsOptions => ({
    caInstance: 'client',
    identityInstance: 'client',
    subjectAltNames: [{ exact: san }],
  });

  it('serves over mTLS when the server certificate has a matching SAN, and the server sees the client certificate', async () => {
    await startServer(xdsServerCredentials());
    serve({ serverTls: mtls, clientTls: clientMtls(SERVER_SAN) });
    const c = client(xdsChannelCredentials());
    await waitUntil('an RPC is served', async () => (await call(c)) !== 'UNAVAILABLE');
    assert.equal(await call(c), `peer URI:${CLIENT_SAN}`);
  });

  it('refuses the server when no SAN matches (UNAVAILABLE), and connects once the cluster matches it', async () => {
    await startServer(xdsServerCredentials());
    serve({ serverTls: mtls, clientTls: clientMtls('spiffe://test.example/someone-else') });
    const c = client(xdsChannelCredentials());
    // The server is up and serving: only the SAN check stands in the way.
    await waitUntil('the server serves', () => serving);
    for (let i = 0; i < 3; i++) assert.equal(await call(c), 'UNAVAILABLE');
    setCluster({
      caInstance: 'client',
      identityInstance: 'client',
      subjectAltNames: [{ prefix: 'SPIFFE://TEST.example/', ignore_case: true }],
    });
    await waitUntil('an RPC is served', async () => (await call(c)) === `peer URI:${CLIENT_SAN}`);
  });

  it('a server requiring a client certificate refuses a client without one', async () => {
    await startServer(xdsServerCredentials());
    serve({ serverTls: mtls, clientTls: { caInstance: 'client' } });
    const c = client(xdsChannelCredentials());
    await waitUntil('the server serves', () => serving);
    for (let i = 0; i < 3; i++) assert.equal(await call(c), 'UNAVAILABLE');
    // The same client with an identity is served: the refusal was the missing certificate.
    setCluster(clientMtls(SERVER_SAN));
    await waitUntil('an RPC is served', async () => (await call(c)) === `peer URI:${CLIENT_SAN}`);
  });

  it('serves TLS without a client certificate when the chain has no CA', async () => {
    await startServer(xdsServerCredentials());
    serve({ serverTls: { identityInstance: 'server' }, clientTls: { caInstance: 'client' } });
    const c = client(xdsChannelCredentials());
    await waitUntil('an RPC is served', async () => (await call(c)) === 'no peer certificate');
  });

  it("serves plain TLS to a client without a certificate when the chain's validation context has no CA", async () => {
    await startServer(xdsServerCredentials());
    const socket = downstreamTlsTransportSocket({ identityInstance: 'server' });
    const context = socket['typed_config'] as JsonObject;
    context['common_tls_context'] = {
      ...(context['common_tls_context'] as JsonObject),
      validation_context: {},
    };
    const address = `127.0.0.1:${port}`;
    management.setResource(
      'listener',
      serverListener(TEMPLATE.replace('%s', address), '127.0.0.1', port, {
        filterChain: { transport_socket: socket },
      }),
    );
    // A grpc-js client that trusts the server's CA and has no certificate of its own.
    const c = new grpc.Client(address, grpc.credentials.createSsl(Buffer.from(ca.certificate)), {
      'grpc.ssl_target_name_override': 'localhost',
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 200,
    });
    clients.push(c);
    await waitUntil('an RPC is served', async () => (await call(c)) === 'no peer certificate');
  });

  it('uses the fallback credentials where the cluster and the chain have no TLS', async () => {
    await startServer(xdsServerCredentials());
    serve({});
    const c = client(xdsChannelCredentials());
    await waitUntil('an RPC is served', async () => (await call(c)) === 'no peer certificate');
  });

  it('plain credentials ignore the xDS TLS settings on both sides', async () => {
    await startServer(grpc.ServerCredentials.createInsecure());
    serve({ serverTls: mtls, clientTls: clientMtls(SERVER_SAN) });
    const c = client(grpc.credentials.createInsecure());
    await waitUntil('an RPC is served', async () => (await call(c)) === 'no peer certificate');
  });

  it('a TLS chain refuses a client whose cluster has no TLS (its fallback is plaintext)', async () => {
    await startServer(xdsServerCredentials());
    serve({ serverTls: mtls });
    const c = client(xdsChannelCredentials());
    await waitUntil('the server serves', () => serving);
    for (let i = 0; i < 3; i++) assert.equal(await call(c), 'UNAVAILABLE');
  });

  it('picks up rotated certificates without a restart', async () => {
    await startServer(xdsServerCredentials());
    serve({ serverTls: mtls, clientTls: clientMtls(SERVER_SAN) });
    const c = client(xdsChannelCredentials());
    await waitUntil('an RPC is served', async () => (await call(c)) === `peer URI:${CLIENT_SAN}`);

    // The cluster now wants the next server identity: refused until the server has it.
    const next = `${SERVER_SAN}-v2`;
    setCluster(clientMtls(next));
    await waitUntil(
      'the old server certificate is refused',
      async () => (await call(c)) === 'UNAVAILABLE',
    );

    // Both sides rotate by rewriting their files; nothing is restarted. The server first:
    // `c` then connects with the client's old certificate (the order each side's provider
    // happens to read its files in on a loaded machine), and that connection keeps it, since
    // a handshake is never redone (as in every gRPC).
    await writeCertificateFiles({ identity: ca.issue({ uris: [next] }) }, serverFiles.dir);
    await waitUntil(
      "the server's new certificate is accepted",
      async () => (await call(c)) === `peer URI:${CLIENT_SAN}`,
      ROTATION_WAIT_MS,
    );
    const nextClient = `${CLIENT_SAN}-v2`;
    await writeCertificateFiles({ identity: ca.issue({ uris: [nextClient] }) }, clientFiles.dir);
    // So each probe is a new channel, whose connection uses what the providers hold now; `c`
    // keeps the providers leased, so they are the ones that read the new files.
    const newChannelAnswer = async () => {
      const probe = client(xdsChannelCredentials());
      const answer = await call(probe);
      probe.close();
      return answer;
    };
    await waitUntil(
      'a new connection uses the new certificates',
      async () => (await newChannelAnswer()) === `peer URI:${nextClient}`,
      ROTATION_WAIT_MS,
    );
    const after = client(xdsChannelCredentials());
    for (let i = 0; i < 5; i++) assert.equal(await call(after), `peer URI:${nextClient}`);
  });
});
