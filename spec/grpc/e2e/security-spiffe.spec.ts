// End to end (gRFC A87): file_watcher providers with a SPIFFE trust bundle map on both sides of
// an mTLS connection through `xds:`. Two trust domains, a.test and b.test, each with its own CA;
// a peer certificate is verified against the roots of the trust domain in its SPIFFE ID. The
// server answers with the client certificate's SANs, so each spec sees who was let in; on the
// server a refused client is refused in the TLS handshake, so its channel never gets ready.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { BOOTSTRAP_OPTION, XdsServer, XdsServerCredentials, register } from '../../../lib/grpc';
import {
  ManagementServer,
  TestCertificateAuthority,
  edsCluster,
  endpoints,
  listener,
  routeConfig,
  serverListener,
  spiffeTrustBundleMap,
  writeCertificateFiles,
  type FileWatcherOptions,
  type TestCertificate,
} from '../../../lib/testing';
import { waitUntil } from '../helpers/backends';
import {
  PEER_ECHO_HANDLERS,
  PEER_ECHO_SERVICE,
  peerCall,
  ROTATION_WAIT_MS,
  securityClient,
} from '../helpers/peer-echo';
import { bindLoopback } from '../helpers/xds-server-env';

const TEMPLATE = 'grpc/server?xds.resource.listening_address=%s';

const call = (client: grpc.Client) => peerCall(client, { withDetails: true });

describe('SPIFFE trust bundle maps (gRFC A87)', () => {
  let management: ManagementServer;
  let server: XdsServer | undefined;
  let clients: grpc.Client[];
  let caA: TestCertificateAuthority;
  let caB: TestCertificateAuthority;
  let port: number;
  let serving: boolean;
  /** The client SANs of the RPCs the server's handler ran for. */
  let handled: string[];

  beforeEach(async () => {
    register();
    management = await ManagementServer.start();
    caA = TestCertificateAuthority.create('trust domain a.test');
    caB = TestCertificateAuthority.create('trust domain b.test');
    clients = [];
    server = undefined;
    handled = [];
  });

  afterEach(async () => {
    for (const client of clients) client.close();
    server?.forceShutdown();
    await management.close();
  });

  /** A provider: an identity and a map (or a CA file), re-read every 0.1 s. */
  async function provider(contents: {
    identity?: TestCertificate;
    map?: string;
    ca?: string;
  }): Promise<FileWatcherOptions & { dir: string }> {
    const files = await writeCertificateFiles({
      ...(contents.identity ? { identity: contents.identity } : {}),
      ...(contents.map !== undefined ? { spiffeBundleMap: contents.map } : {}),
      ...(contents.ca !== undefined ? { ca: contents.ca } : {}),
    });
    return { ...files, refreshInterval: '0.1s' };
  }

  const bothDomains = () => spiffeTrustBundleMap({ 'a.test': [caA], 'b.test': [caB] });

  let bootstrap: string;

  /**
   * An XdsServer on 127.0.0.1 whose chain takes its certificate and its CA (or map) from the
   * `server` instance and requires a client certificate; the other instances are for clients.
   */
  async function start(providers: Record<string, FileWatcherOptions>): Promise<void> {
    bootstrap = JSON.stringify(
      management.bootstrap({
        serverListenerResourceNameTemplate: TEMPLATE,
        certificateProviders: providers,
      }),
    );
    serving = false;
    const xdsServer = new XdsServer({
      [BOOTSTRAP_OPTION]: bootstrap,
      onServingStatusUpdate: (_address, status) => (serving = status.serving),
    });
    server = xdsServer;
    xdsServer.addService(PEER_ECHO_SERVICE, {
      Echo: (call: grpc.ServerUnaryCall<Buffer, string>, done: grpc.sendUnaryData<string>) => {
        handled.push(call.getAuthContext().sslPeerCertificate?.subjectaltname ?? 'none');
        (PEER_ECHO_HANDLERS.Echo as grpc.handleUnaryCall<Buffer, string>)(call, done);
      },
    });
    const credentials = new XdsServerCredentials(grpc.ServerCredentials.createInsecure());
    port = await bindLoopback(xdsServer, credentials);
    management.setResource(
      'listener',
      serverListener(TEMPLATE.replace('%s', `127.0.0.1:${port}`), '127.0.0.1', port, {
        tls: { identityInstance: 'server', caInstance: 'server', requireClientCertificate: true },
      }),
    );
  }

  /** A client on `xds:///<instance>.test`, whose cluster uses `instance` for CA and identity. */
  function client(instance: string): grpc.Client {
    management.setResource('listener', listener(`${instance}.test`, `routes-${instance}`));
    management.setResource('route', routeConfig(`routes-${instance}`, { cluster: instance }));
    management.setResource(
      'cluster',
      edsCluster(instance, { tls: { caInstance: instance, identityInstance: instance } }),
    );
    management.setResource('endpoint', endpoints(instance, [{ addresses: [`127.0.0.1:${port}`] }]));
    const created = securityClient(`xds:///${instance}.test`, bootstrap);
    clients.push(created);
    return created;
  }

  /** The server's provider: a certificate of a.test, the map of both domains. */
  const serverOfA = async (map = bothDomains()) =>
    provider({ identity: caA.issue({ uris: ['spiffe://a.test/server'] }), map });

  /** A client provider: a certificate from `ca` with these URI SANs, and `map`. */
  const clientOf = async (ca: TestCertificateAuthority, uris: string[], map = bothDomains()) =>
    provider({ identity: ca.issue({ uris }), map });

  /** Waits until RPCs fail with `details`, then expects three more to fail so. */
  async function assertRefused(c: grpc.Client, details: RegExp): Promise<void> {
    await waitUntil('the server serves', () => serving);
    // The client's own resources may still be on their way: the first refusal is awaited.
    await waitUntil(`an RPC fails with ${details}`, async () => details.test(await call(c)));
    for (let i = 0; i < 3; i++) {
      const answer = await call(c);
      assert.match(answer, /^UNAVAILABLE: /);
      assert.match(answer, details);
    }
  }

  it('accepts clients of either trust domain in the map, each verified against its own roots', async () => {
    await start({
      server: await serverOfA(),
      a: await clientOf(caA, ['spiffe://a.test/client']),
      b: await clientOf(caB, ['spiffe://b.test/client']),
    });
    const a = client('a');
    await waitUntil('a.test is served', async () => (await call(a)).startsWith('peer'));
    assert.equal(await call(a), 'peer URI:spiffe://a.test/client');
    const b = client('b');
    await waitUntil('b.test is served', async () => (await call(b)).startsWith('peer'));
    assert.equal(await call(b), 'peer URI:spiffe://b.test/client');
  });

  /**
   * Waits until a.test's client is served, then expects `c`'s RPCs to fail with UNAVAILABLE
   * because its connection does: the server refused it in the handshake, so the channel never
   * gets ready, the per-RPC refusal never answers, and no handler runs for it.
   */
  async function assertRefusedInHandshake(c: grpc.Client): Promise<void> {
    const a = client('a');
    await waitUntil('a.test is served', async () => (await call(a)).startsWith('peer'));
    const before = handled.length;
    await waitUntil('an RPC fails', async () => (await call(c)).startsWith('UNAVAILABLE'));
    for (let i = 0; i < 3; i++) {
      const answer = await call(c);
      assert.match(answer, /^UNAVAILABLE: /);
      assert.doesNotMatch(answer, /client certificate refused/);
    }
    assert.notEqual(c.getChannel().getConnectivityState(false), grpc.connectivityState.READY);
    assert.equal(handled.length, before, 'no handler ran for the refused client');
  }

  it("refuses, in the server's TLS handshake, a client whose certificate does not chain to its own trust domain's roots", async () => {
    await start({
      server: await serverOfA(),
      a: await clientOf(caA, ['spiffe://a.test/client']),
      // Signed by a.test's CA, which the server trusts, but naming b.test.
      impostor: await clientOf(caA, ['spiffe://b.test/impostor']),
      unknown: await clientOf(caA, ['spiffe://c.test/client']),
      twoIds: await clientOf(caA, ['spiffe://a.test/one', 'spiffe://a.test/two']),
    });
    await assertRefusedInHandshake(client('impostor'));
    await assertRefusedInHandshake(client('unknown'));
    await assertRefusedInHandshake(client('twoIds'));
  });

  it('accepts, on the server, a client whose chain leads through an intermediate CA of its trust domain, and refuses one through an intermediate of another', async () => {
    /** A client provider whose certificate `ca`'s intermediate issued, sent with it. */
    const throughIntermediate = async (ca: TestCertificateAuthority, uri: string) => {
      const intermediate = ca.intermediate(`intermediate of ${uri}`);
      const leaf = intermediate.issue({ uris: [uri] });
      const identity = { ...leaf, certificate: leaf.certificate + intermediate.certificate };
      return provider({ identity, map: bothDomains() });
    };
    await start({
      server: await serverOfA(),
      a: await clientOf(caA, ['spiffe://a.test/client']),
      chained: await throughIntermediate(caA, 'spiffe://a.test/chained'),
      // b.test's intermediate, which the server's TLS accepts, but naming a.test.
      crossed: await throughIntermediate(caB, 'spiffe://a.test/crossed'),
    });
    const chained = client('chained');
    await waitUntil('the chained client is served', async () =>
      (await call(chained)).startsWith('peer'),
    );
    assert.equal(await call(chained), 'peer URI:spiffe://a.test/chained');
    await assertRefusedInHandshake(client('crossed'));
  });

  it('refuses, on the client, a server of a trust domain missing from its map, and accepts it once the map is reloaded with it', async () => {
    const onlyB = spiffeTrustBundleMap({ 'b.test': [caB] });
    const clientFiles = await clientOf(caA, ['spiffe://a.test/client'], onlyB);
    await start({ server: await serverOfA(), a: clientFiles });
    const a = client('a');
    await assertRefused(a, /trust domain "a\.test" is not in the SPIFFE trust bundle map/);
    await writeCertificateFiles({ spiffeBundleMap: bothDomains() }, clientFiles.dir);
    await waitUntil(
      'the reloaded map is used',
      async () => (await call(a)).startsWith('peer'),
      ROTATION_WAIT_MS,
    );
    assert.equal(await call(a), 'peer URI:spiffe://a.test/client');
  });

  it("refuses, on the client, a server whose certificate does not chain to its trust domain's roots", async () => {
    await start({
      // Signed by b.test's CA but naming a.test.
      server: await provider({
        identity: caB.issue({ uris: ['spiffe://a.test/server'] }),
        map: bothDomains(),
      }),
      a: await clientOf(caA, ['spiffe://a.test/client']),
    });
    await assertRefused(
      client('a'),
      /SPIFFE verification failed: the peer certificate does not chain to a root of trust domain "a\.test"/,
    );
  });

  it('uses the map rather than ca_certificate_file when both are set', async () => {
    const other = TestCertificateAuthority.create('not the server CA');
    await start({
      server: await serverOfA(),
      a: await provider({
        identity: caA.issue({ uris: ['spiffe://a.test/client'] }),
        map: bothDomains(),
        ca: other.certificate,
      }),
    });
    const a = client('a');
    await waitUntil('a.test is served', async () => (await call(a)).startsWith('peer'));
  });

  it('fails connections with an error naming spiffe_trust_bundle_map_file and the bad entry when the map is malformed', async () => {
    const malformed = JSON.stringify({
      trust_domains: { 'a.test': { keys: [{ kty: 'EC', use: 'x509-svid', x5c: ['AAAA'] }] } },
    });
    const files = await clientOf(caA, ['spiffe://a.test/client'], malformed);
    await start({ server: await serverOfA(), a: files });
    await assertRefused(
      client('a'),
      new RegExp(
        `spiffe_trust_bundle_map_file ${files.spiffeTrustBundleMapFile!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ` +
          'trust_domains\\["a\\.test"\\]\\.keys\\[0\\]\\.x5c: not a certificate',
      ),
    );
  });

  it('keeps the last good map when a reload finds the file malformed', async () => {
    const files = await clientOf(caA, ['spiffe://a.test/client']);
    await start({ server: await serverOfA(), a: files });
    const a = client('a');
    await waitUntil('a.test is served', async () => (await call(a)).startsWith('peer'));
    // The map first, then a new identity: a read that sees the identity read the map after it.
    await writeCertificateFiles({ spiffeBundleMap: '{"trust_domains": 1}' }, files.dir);
    const next = caA.issue({ uris: ['spiffe://a.test/client-v2'] });
    await writeCertificateFiles({ identity: next }, files.dir);
    // Each probe on a new channel, so a new connection, verified with the map held then.
    await waitUntil(
      'the files are read again',
      async () => (await call(client('a'))).endsWith('client-v2'),
      ROTATION_WAIT_MS,
    );
    const again = client('a');
    for (let i = 0; i < 3; i++)
      assert.equal(await call(again), 'peer URI:spiffe://a.test/client-v2');
  });
});
