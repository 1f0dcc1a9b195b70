// End to end (gRFC A83): the GCP authentication filter adds `authorization: Bearer <ID token>`
// to the RPCs routed to a Cluster whose metadata names an audience, with tokens from a fake GCE
// metadata server on 127.0.0.1 (found through GCE_METADATA_HOST, as Google's auth libraries
// find it), cached until shortly before they expire; a bad filter config or Audience is NACKed.
// Tokens go on TLS connections only (the backend's certificate made at test time): an RPC that
// would carry one on an insecure connection fails with UNAUTHENTICATED.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { XdsChannelCredentials } from '../../../lib/grpc';
import {
  TestCertificateAuthority,
  edsCluster,
  endpoints,
  writeCertificateFiles,
  type JsonObject,
} from '../../../lib/testing';
import { waitUntil } from '../helpers/backends';
import { mockClock, realClock } from '../../helpers/clock';
import { SERVICE, sendRpc, startXdsEnv, type XdsEnv } from '../helpers/xds-env';
import {
  recordingBackend,
  tlsServerCredentials,
  type RecordingBackend,
} from '../helpers/recording-backend';

const GCP_AUTHN_URL =
  'type.googleapis.com/envoy.extensions.filters.http.gcp_authn.v3.GcpAuthnFilterConfig';
const AUDIENCE_URL = 'type.googleapis.com/envoy.extensions.filters.http.gcp_authn.v3.Audience';
const ROUTER_URL = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
const FILTER = 'gcp-authn';
const IDENTITY_PATH = '/computeMetadata/v1/instance/service-accounts/default/identity';

/** A JWT (unsigned: the client reads only `exp`) for `audience`, expiring at `exp` seconds. */
function jwt(audience: string, exp: number, serial: number, pad = ''): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const claims = pad ? { aud: audience, exp, serial, pad } : { aud: audience, exp, serial };
  return `${part({ alg: 'none' })}.${part(claims)}.sig`;
}

/** A fake GCE metadata server: ID tokens valid `lifetimeS` from (mock) now, or an HTTP error. */
class FakeMetadataServer {
  /** Each request: the audience asked for, and whether it carried Metadata-Flavor: Google. */
  readonly requests: { audience: string; flavored: boolean }[] = [];
  lifetimeS = 3600;
  failWith: number | undefined;
  /** Characters of a `pad` claim in the tokens: a valid token of any size. */
  padding = 0;
  private readonly server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '', 'http://metadata');
    const audience = url.searchParams.get('audience') ?? '';
    this.requests.push({ audience, flavored: request.headers['metadata-flavor'] === 'Google' });
    if (url.pathname !== IDENTITY_PATH || this.failWith !== undefined) {
      response.writeHead(this.failWith ?? 404).end();
      return;
    }
    const exp = Math.floor(Date.now() / 1000) + this.lifetimeS;
    response.end(jwt(audience, exp, this.requests.length, 'x'.repeat(this.padding)));
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** HCM fields: the gcp_authn filter (its config fields), then the router. */
function gcpAuthnFilter(config: JsonObject = {}): JsonObject {
  return {
    http_filters: [
      { name: FILTER, typed_config: { '@type': GCP_AUTHN_URL, ...config } },
      { name: 'router', typed_config: { '@type': ROUTER_URL } },
    ],
  };
}

/** An EDS cluster whose metadata names `audience` for the filter (typed_filter_metadata). */
function clusterFor(name: string, audience: string | undefined, tls = false): JsonObject {
  const cluster = edsCluster(name, tls ? { tls: { caInstance: 'roots' } } : {});
  if (audience === undefined) return cluster;
  return {
    ...cluster,
    metadata: { typed_filter_metadata: { [FILTER]: { '@type': AUDIENCE_URL, url: audience } } },
  };
}

/** The bearer token's `aud` and serial (which fetch produced it), or 'none'. */
function tokenOf(header: string): string {
  if (header === 'none') return header;
  const payload = header.replace(/^Bearer /, '').split('.')[1]!;
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as JsonObject;
  return `${String(claims.aud)}#${String(claims.serial)}`;
}

describe('e2e: GCP authentication filter (A83)', () => {
  let env: XdsEnv;
  let metadataServer: FakeMetadataServer;
  let ca: TestCertificateAuthority;
  /** Serves TLS with a certificate for SERVICE, made by `ca`. */
  let backend: RecordingBackend;
  /** Serves without TLS. */
  let plainBackend: RecordingBackend;

  beforeEach(async () => {
    metadataServer = new FakeMetadataServer();
    // Read by the plugin at fetch time; this spec file runs in a process of its own.
    process.env.GCE_METADATA_HOST = await metadataServer.start();
    delete process.env.GCE_METADATA_IP;
    ca = TestCertificateAuthority.create();
    backend = await recordingBackend(tlsServerCredentials(ca, SERVICE));
    plainBackend = await recordingBackend(grpc.ServerCredentials.createInsecure());
    const roots = await writeCertificateFiles({ ca: ca.certificate });
    env = await startXdsEnv([], {}, { certificateProviders: { roots } });
  });

  afterEach(async () => {
    realClock();
    await env.close();
    backend.stop();
    plainBackend.stop();
    await metadataServer.close();
    delete process.env.GCE_METADATA_HOST;
  });

  /** A client whose channel credentials are TLS, trusting the backend's CA. */
  function tlsClient(): grpc.Client {
    return env.client({}, grpc.credentials.createSsl(Buffer.from(ca.certificate)));
  }

  /**
   * Serves clusters `audiences` (name → audience), all on `on` (the TLS backend by default);
   * the clusters named in `tlsClusters` have an UpstreamTlsContext.
   */
  function serve(
    audiences: Record<string, string | undefined>,
    hcm = gcpAuthnFilter(),
    on: (cluster: string) => RecordingBackend = () => backend,
    tlsClusters: readonly string[] = [],
  ): void {
    const names = Object.keys(audiences);
    env.serve({
      hcm,
      routes: names.map((name) => ({
        match: { prefix: '', headers: [{ name: 'x-cluster', exact_match: name }] },
        route: { cluster: name },
      })),
      clusters: names.map((name) => clusterFor(name, audiences[name], tlsClusters.includes(name))),
      endpoints: names.map((name) => endpoints(name, [{ addresses: [on(name).address] }])),
    });
  }

  /** One RPC to `cluster`: the token `on` saw (`aud#serial`), or the status name. */
  async function rpcTo(
    client: grpc.Client,
    cluster: string,
    headers: Record<string, string> = {},
    on = backend,
  ): Promise<string> {
    const metadata = new grpc.Metadata();
    metadata.set('x-cluster', cluster);
    for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
    try {
      await sendRpc(client, { metadata });
      return tokenOf(on.seen.at(-1)!);
    } catch (e) {
      return grpc.status[(e as grpc.ServiceError).code]!;
    }
  }

  it('adds the ID token for the cluster audience, fetched once for many RPCs', async () => {
    serve({ a: 'https://a.run.app' });
    const client = tlsClient();
    const seen = [];
    for (let i = 0; i < 5; i++) seen.push(await rpcTo(client, 'a'));
    assert.deepEqual(seen, Array(5).fill('https://a.run.app#1'));
    assert.deepEqual(metadataServer.requests, [{ audience: 'https://a.run.app', flavored: true }]);
  });

  it('sends no token to a cluster whose metadata names no audience for the filter', async () => {
    serve({ a: undefined });
    assert.equal(await rpcTo(tlsClient(), 'a'), 'none');
    assert.equal(metadataServer.requests.length, 0);
  });

  it('fetches a new token once the cached one is within 30 s of its expiry', async (t) => {
    const tick = mockClock(t, ['Date']);
    serve({ a: 'https://a.run.app' });
    const client = tlsClient();
    assert.equal(await rpcTo(client, 'a'), 'https://a.run.app#1');
    tick(3600_000 - 31_000);
    // Within a minute of the cached expiry: this RPC still uses the token and starts a refresh.
    assert.equal(await rpcTo(client, 'a'), 'https://a.run.app#1');
    await waitUntil('the refresh', () => metadataServer.requests.length === 2);
    tick(2_000);
    assert.equal(await rpcTo(client, 'a'), 'https://a.run.app#2');
    assert.equal(metadataServer.requests.length, 2);
  });

  it('keeps one token per audience, as many audiences as cache_config.cache_size', async () => {
    serve(
      { a: 'https://a.run.app', b: 'https://b.run.app' },
      gcpAuthnFilter({ cache_config: { cache_size: 1 } }),
    );
    const client = tlsClient();
    const seen = [];
    for (const cluster of ['a', 'a', 'b', 'a']) seen.push(await rpcTo(client, cluster));
    // b's credential pushed a's out of the one-entry cache: a's token is fetched again.
    assert.deepEqual(seen, [
      'https://a.run.app#1',
      'https://a.run.app#1',
      'https://b.run.app#2',
      'https://a.run.app#3',
    ]);
  });

  it('keeps the cached tokens across a Listener update, trimmed to a new cache_size', async () => {
    const both = { a: 'https://a.run.app', b: 'https://b.run.app' };
    serve(both, gcpAuthnFilter({ cache_config: { cache_size: 2 } }));
    const client = tlsClient();
    assert.equal(await rpcTo(client, 'a'), 'https://a.run.app#1');
    assert.equal(await rpcTo(client, 'b'), 'https://b.run.app#2');
    // The new Listener also aborts RPCs that ask for it by header: that tells when it is in use.
    const hcm = gcpAuthnFilter({ cache_config: { cache_size: 1 } });
    const filters = hcm.http_filters as JsonObject[];
    const abortOnHeader = {
      name: 'fault',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault',
        abort: { header_abort: {}, percentage: { numerator: 100, denominator: 'HUNDRED' } },
      },
    };
    serve(both, { http_filters: [abortOnHeader, ...filters] });
    await waitUntil(
      'the new Listener is in use',
      async () =>
        (await rpcTo(client, 'b', { 'x-envoy-fault-abort-grpc-request': '5' })) === 'NOT_FOUND',
    );
    // b, the most recently used, stays; a was dropped by the smaller cache.
    assert.equal(await rpcTo(client, 'b'), 'https://b.run.app#2');
    assert.equal(await rpcTo(client, 'a'), 'https://a.run.app#3');
  });

  it('fails RPCs with UNAVAILABLE or UNAUTHENTICATED as the metadata server fails', async () => {
    metadataServer.failWith = 503;
    serve({ a: 'https://a.run.app', b: 'https://b.run.app' });
    const client = tlsClient();
    assert.equal(await rpcTo(client, 'a'), 'UNAVAILABLE');
    metadataServer.failWith = 403;
    assert.equal(await rpcTo(client, 'b'), 'UNAUTHENTICATED');
    assert.equal(backend.seen.length, 0);
  });

  it('fails RPCs with UNAUTHENTICATED naming the limit when the metadata server answers over 64 KiB', async () => {
    metadataServer.padding = 70_000;
    serve({ a: 'https://a.run.app' });
    const client = tlsClient();
    const metadata = new grpc.Metadata();
    metadata.set('x-cluster', 'a');
    await assert.rejects(sendRpc(client, { metadata }), {
      code: grpc.status.UNAUTHENTICATED,
      details:
        /GCP ID token fetch from http:\/\/.+ failed: the response is larger than 65536 bytes/,
    });
    assert.equal(backend.seen.length, 0);
  });

  it('NACKs an empty Audience url and cache_size 0, naming the field, and keeps the last good Listener', async () => {
    const nack = (type: string) =>
      env.server.requests.find((r) => r.typeUrl.endsWith(type) && r.errorDetail !== undefined)
        ?.errorDetail?.message;
    serve({ a: '' });
    const client = tlsClient();
    assert.equal(await rpcTo(client, 'a'), 'UNAVAILABLE');
    await waitUntil('the Cluster is NACKed', () => nack('.Cluster') !== undefined);
    assert.match(
      String(nack('.Cluster')),
      /metadata\.typed_filter_metadata\[gcp-authn\]\.url: must be non-empty/,
    );
    serve({ a: 'https://a.run.app' });
    await waitUntil(
      'cluster a is served',
      async () => (await rpcTo(client, 'a')) !== 'UNAVAILABLE',
    );
    serve({ a: 'https://a.run.app' }, gcpAuthnFilter({ cache_config: { cache_size: 0 } }));
    await waitUntil('the Listener is NACKed', () => nack('.Listener') !== undefined);
    assert.match(
      String(nack('.Listener')),
      /http_filters\[0\]\.typed_config\.cache_config\.cache_size: must be greater than 0/,
    );
    assert.equal(await rpcTo(client, 'a'), 'https://a.run.app#1');
  });

  it('fails RPCs with UNAUTHENTICATED on a channel with insecure credentials, sending and fetching no token', async () => {
    serve({ a: 'https://a.run.app', b: undefined }, gcpAuthnFilter(), () => plainBackend);
    const client = env.client();
    const metadata = new grpc.Metadata();
    metadata.set('x-cluster', 'a');
    await assert.rejects(sendRpc(client, { metadata }), {
      code: grpc.status.UNAUTHENTICATED,
      details: /cannot send the ID token for https:\/\/a\.run\.app on an insecure connection/,
    });
    // A cluster that wants no token is served as before.
    assert.equal(await rpcTo(client, 'b', {}, plainBackend), 'none');
    assert.deepEqual(plainBackend.seen, ['none']);
    assert.equal(metadataServer.requests.length, 0);
  });

  it('adds the token on the TLS connections of XdsChannelCredentials and fails RPCs on their insecure fallback', async () => {
    const audiences = { secure: 'https://a.run.app', plain: 'https://a.run.app' };
    serve(
      audiences,
      gcpAuthnFilter(),
      (cluster) => (cluster === 'secure' ? backend : plainBackend),
      ['secure'],
    );
    const client = env.client({}, new XdsChannelCredentials(grpc.credentials.createInsecure()));
    assert.equal(await rpcTo(client, 'secure'), 'https://a.run.app#1');
    assert.equal(await rpcTo(client, 'plain', {}, plainBackend), 'UNAUTHENTICATED');
    assert.deepEqual(plainBackend.seen, []);
    assert.equal(await rpcTo(client, 'secure'), 'https://a.run.app#1');
  });

  it('sends the token of the last filter when two filters name an audience for the cluster', async () => {
    const second = 'gcp-authn-2';
    const [first, router] = gcpAuthnFilter().http_filters as JsonObject[];
    const cluster = clusterFor('a', 'https://first.run.app');
    const metadata = cluster.metadata as { typed_filter_metadata: JsonObject };
    metadata.typed_filter_metadata[second] = {
      '@type': AUDIENCE_URL,
      url: 'https://second.run.app',
    };
    env.serve({
      hcm: { http_filters: [first, { ...first, name: second }, router] },
      clusters: [cluster],
      endpoints: [endpoints('a', [{ addresses: [backend.address] }])],
    });
    assert.equal(await rpcTo(tlsClient(), 'a'), 'https://second.run.app#1');
  });
});
