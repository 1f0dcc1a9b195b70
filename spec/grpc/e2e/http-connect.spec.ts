// End to end: HTTP CONNECT configured by xDS (gRFC A86). A Cluster whose transport socket is
// Http11ProxyUpstreamTransport reaches each endpoint through the proxy its EDS metadata names
// (the endpoint's own, else its locality's): a CONNECT to the endpoint's address, then HTTP/2,
// and TLS first when the wrapped transport socket is an UpstreamTlsContext. The proxy here
// records every CONNECT target it relays.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { BOOTSTRAP_OPTION, XdsChannelCredentials } from '../../../lib/grpc';
import {
  TestCertificateAuthority,
  edsCluster,
  endpoints,
  upstreamTlsTransportSocket,
  writeCertificateFiles,
  type JsonObject,
} from '../../../lib/testing';
import { ECHO_PATH, unaryMethod } from '../helpers/backends';
import { startConnectProxy, type ConnectProxy } from '../helpers/connect-proxy';
import { TARGET, sendRpc, sendRpcs, show, startXdsEnv, type XdsEnv } from '../helpers/xds-env';

const PROXY_KEY = 'envoy.http11_proxy_transport_socket.proxy_address';
const SERVER_SAN = 'spiffe://test.example/server';
/** Generous, for a loaded machine: a timed-out RPC would only make the spec send more. */
const RPC_DEADLINE_MS = 10_000;

/** `typed_filter_metadata` naming `proxy` (at `host`) as the A86 proxy address. */
function proxyMetadata(proxy: ConnectProxy, host = '127.0.0.1'): JsonObject {
  return {
    typed_filter_metadata: {
      [PROXY_KEY]: {
        '@type': 'type.googleapis.com/envoy.config.core.v3.Address',
        socket_address: { address: host, port_value: proxy.port },
      },
    },
  };
}

/** The Http11ProxyUpstreamTransport transport socket, wrapping `inner` when given. */
function http11ProxySocket(inner?: JsonObject): JsonObject {
  return {
    name: 'envoy.transport_sockets.http_11_proxy',
    typed_config: {
      '@type':
        'type.googleapis.com/envoy.extensions.transport_sockets.http_11_proxy.v3.Http11ProxyUpstreamTransport',
      ...(inner ? { transport_socket: inner } : {}),
    },
  };
}

/**
 * Cluster `echo`'s assignment: one locality (with `localityProxy` in its metadata, if given)
 * of `addresses`, endpoint i with `endpointProxies[i]` in its metadata.
 */
function assignment(
  addresses: readonly string[],
  endpointProxies: readonly (ConnectProxy | undefined)[],
  localityProxy?: ConnectProxy,
): JsonObject {
  const cla = endpoints('echo', [{ addresses: [...addresses] }]);
  const [locality] = cla['endpoints'] as JsonObject[];
  if (localityProxy) locality!['metadata'] = proxyMetadata(localityProxy);
  const lbEndpoints = locality!['lb_endpoints'] as JsonObject[];
  endpointProxies.forEach((proxy, i) => {
    if (proxy) lbEndpoints[i]!['metadata'] = proxyMetadata(proxy);
  });
  return cla;
}

/** Sends batches of RPCs until every backend named has answered one; returns the counts. */
async function sendUntilAllAnswer(
  client: grpc.Client,
  names: readonly string[],
): Promise<Map<string, number>> {
  const all = new Map<string, number>();
  for (let sent = 0; !names.every((n) => all.has(n)); sent += 20) {
    if (sent >= 400) assert.fail(`not all of ${names} answered in ${sent} RPCs: ${show(all)}`);
    const batch = await sendRpcs(client, 20, { waitForReady: true, deadlineMs: RPC_DEADLINE_MS });
    for (const [key, n] of batch) all.set(key, (all.get(key) ?? 0) + n);
  }
  return all;
}

describe('e2e: HTTP CONNECT configured by xDS (A86)', () => {
  let env: XdsEnv;
  let proxies: ConnectProxy[];
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b']);
    proxies = [await startConnectProxy(), await startConnectProxy()];
  });
  afterEach(async () => {
    await env.close();
    for (const proxy of proxies) await proxy.close();
  });

  it('an endpoint whose metadata names a proxy is reached through it with a CONNECT to its own address; the others directly', async () => {
    const [proxy] = proxies;
    const [a, b] = env.addresses('a', 'b');
    env.serve({
      clusters: [{ ...edsCluster('echo'), transport_socket: http11ProxySocket() }],
      endpoints: [assignment([a!, b!], [proxy, undefined])],
    });
    await sendUntilAllAnswer(env.client(), ['a', 'b']);
    assert.ok(proxy!.connects.length > 0, 'a was reached through the proxy');
    assert.deepEqual(new Set(proxy!.connects), new Set([a]), 'only a, by its own address');
  });

  it('a cluster with outlier detection reaches its proxied endpoints too', async () => {
    // grpc-js's outlier_detection, above cluster_impl, knows endpoints by their own address: the
    // proxy's address must not reach it in their place.
    const [proxy] = proxies;
    const [a, b] = env.addresses('a', 'b');
    env.serve({
      clusters: [
        {
          ...edsCluster('echo'),
          transport_socket: http11ProxySocket(),
          outlier_detection: { interval: '10s', base_ejection_time: '30s' },
        },
      ],
      endpoints: [assignment([a!, b!], [proxy, undefined])],
    });
    await sendUntilAllAnswer(env.client(), ['a', 'b']);
    assert.deepEqual(new Set(proxy!.connects), new Set([a]), 'a, through the proxy');
  });

  it("the locality's proxy serves endpoints that name none; an endpoint's own proxy wins", async () => {
    const [localityProxy, endpointProxy] = proxies;
    const [a, b] = env.addresses('a', 'b');
    env.serve({
      clusters: [{ ...edsCluster('echo'), transport_socket: http11ProxySocket() }],
      endpoints: [assignment([a!, b!], [undefined, endpointProxy], localityProxy)],
    });
    await sendUntilAllAnswer(env.client(), ['a', 'b']);
    assert.deepEqual(new Set(localityProxy!.connects), new Set([a]));
    assert.deepEqual(new Set(endpointProxy!.connects), new Set([b]));
  });

  it('a malformed proxy address or wrapped socket is NACKed with its field path, and the configuration in use stays', async () => {
    const [proxy] = proxies;
    const [a] = env.addresses('a');
    const good = assignment([a!], [proxy]);
    const cluster = { ...edsCluster('echo'), transport_socket: http11ProxySocket() };
    env.serve({ clusters: [cluster], endpoints: [good] });
    const client = env.client();
    await sendUntilAllAnswer(client, ['a']);

    const mark = env.server.requests.length;
    const bad = assignment([a!], [proxy]);
    const [locality] = bad['endpoints'] as JsonObject[];
    const [endpoint] = locality!['lb_endpoints'] as JsonObject[];
    endpoint!['metadata'] = proxyMetadata(proxy!, 'proxy.example');
    const badSocket = http11ProxySocket({
      typed_config: { '@type': 'type.googleapis.com/google.protobuf.Empty' },
    });
    env.serve({
      clusters: [{ ...edsCluster('echo'), transport_socket: badSocket }],
      endpoints: [bad],
    });
    const nackOf = (type: string) =>
      env.server.waitForRequest((r) => r.typeUrl.endsWith(type) && r.errorDetail !== undefined, {
        after: mark,
      });
    const [edsNack, cdsNack] = await Promise.all([
      nackOf('.ClusterLoadAssignment'),
      nackOf('.Cluster'),
    ]);
    const edsPath = `endpoints[0].lb_endpoints[0].metadata.typed_filter_metadata[${PROXY_KEY}]`;
    const edsError = `${edsPath}.socket_address.address: must be an IP address`;
    assert.ok(edsNack.errorDetail!.message.includes(edsError), edsNack.errorDetail!.message);
    const cdsError =
      'transport_socket.typed_config.transport_socket.typed_config.type_url: ' +
      'unsupported value type.googleapis.com/google.protobuf.Empty';
    assert.ok(cdsNack.errorDetail!.message.includes(cdsError), cdsNack.errorDetail!.message);
    assert.deepEqual(show(await sendRpcs(client, 10)), show(new Map([['a', 10]])));
  });

  it('without Http11ProxyUpstreamTransport, proxy metadata is ignored: endpoints are reached directly', async () => {
    const [proxy] = proxies;
    const [a, b] = env.addresses('a', 'b');
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [assignment([a!, b!], [proxy, proxy])],
    });
    await sendUntilAllAnswer(env.client(), ['a', 'b']);
    assert.deepEqual(proxy!.connects, []);
  });
});

describe('e2e: HTTP CONNECT with TLS inside the tunnel (A86, A29)', () => {
  let env: XdsEnv;
  let proxy: ConnectProxy;
  let backend: grpc.Server;
  let backendAddress: string;
  let bootstrap: string;
  const clients: grpc.Client[] = [];

  beforeEach(async () => {
    const ca = TestCertificateAuthority.create();
    const serverCertificate = ca.issue({ uris: [SERVER_SAN] });
    const caFiles = await writeCertificateFiles({ ca: ca.certificate });
    env = await startXdsEnv([], {}, { certificateProviders: { client: caFiles } });
    bootstrap = JSON.stringify(env.server.bootstrap({ certificateProviders: { client: caFiles } }));
    proxy = await startConnectProxy();
    backend = new grpc.Server();
    backend.addService(
      { Echo: unaryMethod(ECHO_PATH) },
      { Echo: (_call: unknown, done: grpc.sendUnaryData<string>) => done(null, 'tls') },
    );
    const credentials = grpc.ServerCredentials.createSsl(null, [
      {
        cert_chain: Buffer.from(serverCertificate.certificate),
        private_key: Buffer.from(serverCertificate.privateKey),
      },
    ]);
    const port = await new Promise<number>((resolve, reject) =>
      backend.bindAsync('127.0.0.1:0', credentials, (e, p) => (e ? reject(e) : resolve(p))),
    );
    backendAddress = `127.0.0.1:${port}`;
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    backend.forceShutdown();
    await env.close();
    await proxy.close();
  });

  function serveTls(subjectAltName: string): void {
    const tls = upstreamTlsTransportSocket({
      caInstance: 'client',
      subjectAltNames: [{ exact: subjectAltName }],
    });
    env.serve({
      clusters: [{ ...edsCluster('echo'), transport_socket: http11ProxySocket(tls) }],
      endpoints: [assignment([backendAddress], [proxy])],
    });
  }

  function xdsClient(): grpc.Client {
    const client = new grpc.Client(
      TARGET,
      new XdsChannelCredentials(grpc.credentials.createInsecure()),
      {
        [BOOTSTRAP_OPTION]: bootstrap,
        'grpc.use_local_subchannel_pool': 1,
      },
    );
    clients.push(client);
    return client;
  }

  it('the backend is reached through the proxy and its certificate is verified inside the tunnel', async () => {
    serveTls(SERVER_SAN);
    assert.equal(
      await sendRpc(xdsClient(), { waitForReady: true, deadlineMs: RPC_DEADLINE_MS }),
      'tls',
    );
    assert.deepEqual(new Set(proxy.connects), new Set([backendAddress]));
  });

  it('a certificate whose SAN does not match fails the RPC, though the tunnel was made', async () => {
    serveTls('spiffe://test.example/someone-else');
    await assert.rejects(sendRpc(xdsClient(), { waitForReady: false }), (e: grpc.ServiceError) => {
      assert.equal(e.code, grpc.status.UNAVAILABLE, e.details);
      return true;
    });
    assert.ok(proxy.connects.includes(backendAddress), `CONNECTs: ${proxy.connects}`);
  });
});
