// End to end (gRFC A101): the SNI a client on `xds:` sends, from the cluster's
// UpstreamTlsContext (`sni`, `auto_host_sni` with the EDS endpoint's hostname), and
// `auto_sni_san_validation`, which checks the server certificate against the SNI sent. Each
// backend terminates TLS itself and records the server name of every ClientHello.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { register } from '../../../lib/grpc';
import {
  ManagementServer,
  TestCertificateAuthority,
  edsCluster,
  endpoints,
  listener,
  logicalDnsCluster,
  routeConfig,
  upstreamTlsTransportSocket,
  writeCertificateFiles,
  type JsonObject,
  type UpstreamTlsOptions,
} from '../../../lib/testing';
import { waitUntil } from '../helpers/backends';
import {
  PEER_ECHO_HANDLERS,
  PEER_ECHO_SERVICE,
  peerCall,
  securityClient,
} from '../helpers/peer-echo';

const SERVICE = 'sni.test';
/** What a backend's certificate is for. */
const BACKEND_NAME = 'backend.example';

interface SniBackend {
  readonly address: string;
  /** The server name of each ClientHello, '' when the client sent none. */
  readonly serverNames: string[];
  close(): void;
}

/** A TLS server on 127.0.0.1 that hands each connection, once decrypted, to a grpc-js server. */
async function startSniBackend(identity: { certificate: string; privateKey: string }) {
  const server = new grpc.Server();
  server.addService(PEER_ECHO_SERVICE, PEER_ECHO_HANDLERS);
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const serverNames: string[] = [];
  const front = tls.createServer(
    { cert: identity.certificate, key: identity.privateKey, ALPNProtocols: ['h2'] },
    (socket) => {
      serverNames.push(socket.servername || '');
      injector.injectConnection(socket);
    },
  );
  front.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const { port } = front.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    serverNames,
    close() {
      front.close();
      injector.destroy();
      server.forceShutdown();
    },
  } satisfies SniBackend;
}

describe('SNI from the cluster (gRFC A101)', () => {
  let management: ManagementServer;
  let ca: TestCertificateAuthority;
  let bootstrap: string;
  let backends: SniBackend[];
  let clients: grpc.Client[];

  beforeEach(async () => {
    register();
    management = await ManagementServer.start();
    ca = TestCertificateAuthority.create();
    const files = await writeCertificateFiles({ ca: ca.certificate });
    bootstrap = JSON.stringify(
      management.bootstrap({ certificateProviders: { roots: { ...files } } }),
    );
    backends = [];
    clients = [];
  });

  afterEach(async () => {
    for (const client of clients) client.close();
    for (const backend of backends) backend.close();
    await management.close();
  });

  async function backend(dns = [BACKEND_NAME]): Promise<SniBackend> {
    const started = await startSniBackend(ca.issue({ dns }));
    backends.push(started);
    return started;
  }

  /** Routes SERVICE to a cluster of `targets` (each with its EDS hostname), with `tls`. */
  function serve(
    targets: readonly { backend: SniBackend; hostname?: string }[],
    tls: Omit<UpstreamTlsOptions, 'caInstance'>,
  ): void {
    management.setResource('listener', listener(SERVICE, 'routes'));
    management.setResource('route', routeConfig('routes', { cluster: 'backend' }));
    management.setResource(
      'cluster',
      edsCluster('backend', { tls: { caInstance: 'roots', ...tls } }),
    );
    const assignment = endpoints('backend', [{ addresses: targets.map((t) => t.backend.address) }]);
    const lbEndpoints = (assignment['endpoints'] as JsonObject[])[0]!['lb_endpoints'] as {
      endpoint: JsonObject;
    }[];
    targets.forEach((t, i) => {
      if (t.hostname !== undefined) lbEndpoints[i]!.endpoint['hostname'] = t.hostname;
    });
    management.setResource('endpoint', assignment);
  }

  function client(): grpc.Client {
    const created = securityClient(`xds:///${SERVICE}`, bootstrap);
    clients.push(created);
    return created;
  }

  const call = (c: grpc.Client) => peerCall(c, { withDetails: true });
  const served = async (c: grpc.Client) => (await call(c)) === 'no peer certificate';

  it("sends the cluster's sni", async () => {
    const b = await backend();
    serve([{ backend: b }], { sni: BACKEND_NAME });
    await waitUntil('an RPC is served', () => served(client()));
    assert.deepEqual([...new Set(b.serverNames)], [BACKEND_NAME]);
  });

  it('sends no SNI when the cluster sets neither sni nor auto_host_sni (not the target name)', async () => {
    const b = await backend();
    serve([{ backend: b }], { sni: '' });
    await waitUntil('an RPC is served', () => served(client()));
    assert.deepEqual([...new Set(b.serverNames)], ['']);
  });

  it("auto_host_sni sends each endpoint's EDS hostname, and sni for an endpoint without one", async () => {
    const named = await backend();
    const unnamed = await backend();
    serve([{ backend: named, hostname: 'host-a.example' }, { backend: unnamed }], {
      sni: 'fallback.example',
      autoHostSni: true,
    });
    const c = client();
    await waitUntil('both endpoints are served', async () => {
      await call(c);
      return named.serverNames.length > 0 && unnamed.serverNames.length > 0;
    });
    assert.deepEqual([...new Set(named.serverNames)], ['host-a.example']);
    assert.deepEqual([...new Set(unnamed.serverNames)], ['fallback.example']);
  });

  it('auto_sni_san_validation checks the server certificate against the SNI sent instead of the matchers', async () => {
    const b = await backend();
    // The matchers would refuse the server; the SNI check replaces them.
    const nobody = [{ exact: 'nobody.example' }];
    serve([{ backend: b }], {
      sni: BACKEND_NAME,
      autoSniSanValidation: true,
      subjectAltNames: nobody,
    });
    await waitUntil('an RPC is served', () => served(client()));
    // An SNI the certificate does not cover is refused, with the reason.
    serve([{ backend: b }], { sni: 'other.example', autoSniSanValidation: true });
    const refused = client();
    await waitUntil('the server is refused', async () =>
      /^UNAVAILABLE: .*no DNS subject alternative name of the server certificate \(backend\.example\) matches the SNI sent, "other\.example"/.test(
        await call(refused),
      ),
    );
  });

  it('auto_sni_san_validation without an SNI sent uses the matchers', async () => {
    const b = await backend();
    serve([{ backend: b }], {
      autoSniSanValidation: true,
      subjectAltNames: [{ exact: 'nobody.example' }],
    });
    const refused = client();
    await waitUntil('the matchers refuse the server', async () =>
      /^UNAVAILABLE: .*match_subject_alt_names/.test(await call(refused)),
    );
    serve([{ backend: b }], {
      autoSniSanValidation: true,
      subjectAltNames: [{ exact: BACKEND_NAME }],
    });
    await waitUntil('an RPC is served', () => served(client()));
  });

  it("auto_host_sni sends a logical DNS cluster's host name, without its port", async () => {
    const b = await backend();
    const port = b.address.split(':')[1]!;
    management.setResource('listener', listener(SERVICE, 'routes'));
    management.setResource('route', routeConfig('routes', { cluster: 'dns' }));
    management.setResource('cluster', {
      ...logicalDnsCluster('dns', 'localhost', Number(port)),
      transport_socket: upstreamTlsTransportSocket({ caInstance: 'roots', autoHostSni: true }),
    });
    await waitUntil('an RPC is served', () => served(client()));
    assert.deepEqual([...new Set(b.serverNames)], ['localhost']);
  });
});
