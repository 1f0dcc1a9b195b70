// gRFC A97: an xDS server entry's `call_creds` of type `jwt_token_file`, against a real TLS
// ManagementServer that records the metadata each stream arrived with.
//
// 1. The token is sent as `authorization: Bearer <token>` on the ADS stream, over TLS.
// 2. It is cached by its `exp` claim: a new stream reuses it while it is far from expiry,
//    even if the file changed.
// 3. Within a minute of (exp - 30 s), a new stream still carries the cached token and starts a
//    re-read; a later stream carries the file's new token. An expired token is re-read before
//    the stream starts. (Short times: the tokens' exp claims are set near the real clock.)
// 4. A missing file fails the stream UNAVAILABLE, a file without a JWT UNAUTHENTICATED; the
//    watchers' error names `xds_servers[0].call_creds[0].config.jwt_token_file`. A file that
//    appears later is read on a later attempt.
// 5. Over an insecure channel the token is never sent: the stream fails, UNAUTHENTICATED,
//    naming the field, and the server sees no stream.
// 6. The LRS stream to the server carries the token too.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { status, XdsClient, type ClusterUpdate } from '../../lib';
import { loadBootstrap } from '../../lib/bootstrap';
import { LrsStream } from '../../lib/client/lrs/lrs-stream';
import {
  ManagementServer,
  TestCertificateAuthority,
  edsCluster,
  writeCertificateFiles,
  type BootstrapJson,
  type RecordedStream,
} from '../../lib/testing';
import { TEST_BACKOFF } from '../helpers/constants';
import { RecordingWatcher } from '../helpers/recording-watcher';

const FIELD = 'xds_servers[0].call_creds[0].config.jwt_token_file';

/** A compact JWS whose payload has `exp` (seconds); the signature is not checked by clients. */
function jwt(exp: number, subject = 'spiffe://cluster.local/ns/default/sa/app'): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'RS256', typ: 'JWT' })}.${part({ sub: subject, exp })}.c2lnbmF0dXJl`;
}

/** `exp` for a token that expires `ms` from now. */
const expIn = (ms: number) => Math.floor((Date.now() + ms) / 1000);

describe('jwt_token_file call credentials (gRFC A97)', () => {
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function tokenFile(token: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'xds-jwt-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'token');
    await writeFile(file, `${token}\n`);
    return file;
  }

  /** A TLS management server, and a bootstrap trusting it with the token file as call_creds. */
  async function tlsServer(
    file: string,
  ): Promise<{ server: ManagementServer; bootstrap: BootstrapJson }> {
    const ca = TestCertificateAuthority.create('jwt CA');
    const identity = ca.issue({ ips: ['127.0.0.1'] });
    const server = await ManagementServer.start({
      tls: { certificate: identity.certificate, privateKey: identity.privateKey },
    });
    cleanup.push(() => server.close());
    server.setResources('cluster', [edsCluster('A')]);
    const files = await writeCertificateFiles({ ca: ca.certificate });
    const bootstrap = server.bootstrap({
      channelCreds: [{ type: 'tls', config: { ca_certificate_file: files.caCertificateFile } }],
      callCreds: [{ type: 'jwt_token_file', config: { jwt_token_file: file } }],
    });
    return { server, bootstrap };
  }

  function startClient(bootstrap: BootstrapJson): XdsClient {
    const client = new XdsClient({ bootstrap, backoff: TEST_BACKOFF });
    cleanup.push(() => client.close());
    return client;
  }

  /**
   * A client of a TLS server whose token file holds `token` (`undefined`: no file), watching
   * cluster A.
   */
  async function watchWithToken(token: string | undefined) {
    const file = await tokenFile(token ?? '');
    if (token === undefined) await rm(file);
    const { server, bootstrap } = await tlsServer(file);
    const watcher = new RecordingWatcher<ClusterUpdate>();
    startClient(bootstrap).watchCluster('A', watcher);
    return { server, file, watcher };
  }

  /** Ends the open stream(s) and returns the next stream the client opens. */
  async function nextStream(server: ManagementServer): Promise<RecordedStream> {
    const after = server.streamsOpened;
    server.endStreams(status.UNAVAILABLE, 'the test ends the stream');
    return server.waitForStream((s) => s.id > after);
  }

  it('a97 sends the token as bearer on the ads stream over tls', async () => {
    const token = jwt(expIn(3600_000));
    const { server, watcher } = await watchWithToken(token);
    await watcher.next('changed');
    const [stream] = server.streams;
    assert.equal(stream?.metadata['authorization'], `Bearer ${token}`);
    assert.match(stream.method, /StreamAggregatedResources$/);
  });

  it('a97 caches the token by exp a new stream far from expiry reuses it', async () => {
    const first = jwt(expIn(3600_000));
    const { server, file, watcher } = await watchWithToken(first);
    await watcher.next('changed');
    await writeFile(file, jwt(expIn(7200_000), 'rotated'));
    const second = await nextStream(server);
    assert.equal(second.metadata['authorization'], `Bearer ${first}`);
  });

  it('a97 near expiry a stream uses the cached token and a later one the re read one', async () => {
    // exp - 30 s is 55 s away: inside the one-minute refresh window from the first call on.
    const old = jwt(expIn(85_000));
    const { server, file, watcher } = await watchWithToken(old);
    await watcher.next('changed');
    assert.equal(server.streams[0]?.metadata['authorization'], `Bearer ${old}`);
    const fresh = jwt(expIn(3600_000), 'rotated');
    await writeFile(file, fresh);
    // This stream starts the re-read, and still carries the cached token (A97: no waiting).
    const second = await nextStream(server);
    assert.equal(second.metadata['authorization'], `Bearer ${old}`);
    // A later stream carries the new token (the re-read may still be under way for the next
    // stream on a loaded machine, so a few are allowed).
    let later = await nextStream(server);
    for (let i = 0; i < 5 && later.metadata['authorization'] !== `Bearer ${fresh}`; i++) {
      later = await nextStream(server);
    }
    assert.equal(later.metadata['authorization'], `Bearer ${fresh}`);
  });

  it('a97 an expired token is re read before the next stream starts', async () => {
    // exp - 30 s is already past: the token is used once (it was just read), then re-read.
    const { server, file, watcher } = await watchWithToken(jwt(expIn(10_000)));
    await watcher.next('changed');
    const fresh = jwt(expIn(3600_000), 'rotated');
    await writeFile(file, fresh);
    const second = await nextStream(server);
    assert.equal(second.metadata['authorization'], `Bearer ${fresh}`);
  });

  it('a97 a missing token file fails the stream unavailable naming the field', async () => {
    const { server, file, watcher } = await watchWithToken(undefined);
    const { error } = await watcher.next('error');
    assert.equal(error.code, status.UNAVAILABLE);
    assert.ok(error.message.includes(`${FIELD}: cannot read "${file}" (ENOENT)`), error.message);
    assert.match(error.message, /UNAVAILABLE/);
    assert.equal(server.streamsOpened, 0, 'no stream reached the server');
    // The file appears (the kubelet writes it late): a later attempt, after the read's backoff,
    // reads it and the stream goes through with it.
    const token = jwt(expIn(3600_000));
    await writeFile(file, token);
    await watcher.next('changed');
    assert.equal(server.streams[0]?.metadata['authorization'], `Bearer ${token}`);
  });

  it('a97 a file without a jwt fails the stream unauthenticated naming the field', async () => {
    const { file, watcher } = await watchWithToken('not-a-jwt');
    const { error } = await watcher.next('error');
    assert.ok(
      error.message.includes(`${FIELD}: "${file}" does not hold a JWT with a numeric exp claim`),
      error.message,
    );
    assert.match(error.message, /UNAUTHENTICATED/);
  });

  it('a97 a token past its exp fails the stream unauthenticated and is not sent', async () => {
    const { server, file, watcher } = await watchWithToken(jwt(expIn(-60_000)));
    const { error } = await watcher.next('error');
    assert.ok(error.message.includes(`${FIELD}: the token in "${file}" expired at`), error.message);
    assert.match(error.message, /UNAUTHENTICATED/);
    assert.equal(server.streamsOpened, 0, 'no stream reached the server');
  });

  it('a97 never sends the token over an insecure channel', async () => {
    const server = await ManagementServer.start();
    cleanup.push(() => server.close());
    server.setResources('cluster', [edsCluster('A')]);
    const file = await tokenFile(jwt(expIn(3600_000)));
    const client = startClient(
      server.bootstrap({
        callCreds: [{ type: 'jwt_token_file', config: { jwt_token_file: file } }],
      }),
    );
    const w = new RecordingWatcher<ClusterUpdate>();
    client.watchCluster('A', w);
    const { error } = await w.next('error');
    assert.equal(error.code, status.UNAVAILABLE);
    assert.match(error.message, /UNAUTHENTICATED/);
    assert.ok(
      error.message.includes(
        'xds_servers[0].call_creds[0] (jwt_token_file): not sent over an insecure channel',
      ),
      error.message,
    );
    assert.equal(server.streamsOpened, 0, 'the server saw no stream, so no token');
  });

  it('a97 the lrs stream carries the token too', async () => {
    const token = jwt(expIn(3600_000));
    const { server, bootstrap } = await tlsServer(await tokenFile(token));
    const loaded = loadBootstrap(bootstrap);
    const lrs = new LrsStream(loaded.xdsServers[0]!, loaded.node, { backoff: TEST_BACKOFF });
    cleanup.push(() => lrs.close());
    lrs.start();
    await server.waitForLoadReport(() => true);
    assert.equal(server.loadReportingStreams[0]?.metadata['authorization'], `Bearer ${token}`);
  });
});
