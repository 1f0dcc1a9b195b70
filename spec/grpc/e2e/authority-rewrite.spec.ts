// End to end: gRFC A81 through real grpc-js channels on xds:///echo.test. A route with
// `auto_host_rewrite` from a server the bootstrap trusts (`trusted_xds_server`) sends each RPC
// with the picked endpoint's EDS hostname (or a logical DNS cluster's name) as its :authority;
// backends on 127.0.0.1 report the authority they received. Anything less (an untrusted server,
// no rewrite on the route, no hostname on the endpoint, a host the application set on the
// call) leaves the authority as it was.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { BOOTSTRAP_OPTION, register } from '../../../lib/grpc';
import {
  ManagementServer,
  edsCluster,
  listener,
  logicalDnsCluster,
  routeConfig,
  type JsonObject,
} from '../../../lib/testing';
import { ECHO_PATH, unaryMethod } from '../helpers/backends';

const SERVICE = 'echo.test';

/** A backend that answers with its name and the :authority of the RPC. */
interface AuthorityBackend {
  readonly name: string;
  readonly port: number;
  close(): void;
}

async function startBackend(name: string): Promise<AuthorityBackend> {
  const server = new grpc.Server();
  server.addService(
    { Echo: unaryMethod(ECHO_PATH) },
    {
      Echo: (call: grpc.ServerUnaryCall<Buffer, string>, callback: grpc.sendUnaryData<string>) =>
        callback(null, `${name} ${call.getHost()}`),
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return { name, port, close: () => server.forceShutdown() };
}

/** One locality of endpoints, each with its EDS hostname when given. */
function assignment(
  cluster: string,
  list: readonly { port: number; hostname?: string }[],
): JsonObject {
  return {
    cluster_name: cluster,
    endpoints: [
      {
        locality: { region: 'r', zone: 'z', sub_zone: '' },
        load_balancing_weight: 1,
        lb_endpoints: list.map((e) => ({
          endpoint: {
            address: { socket_address: { address: '127.0.0.1', port_value: e.port } },
            ...(e.hostname === undefined ? {} : { hostname: e.hostname }),
          },
        })),
      },
    ],
  };
}

/** Routes for every RPC to `cluster`, with `auto_host_rewrite` as given. */
function routesTo(cluster: string, autoHostRewrite?: boolean): JsonObject {
  const base = routeConfig('echo-routes', { domains: ['*'], cluster });
  const route = {
    match: { prefix: '' },
    route: {
      cluster,
      ...(autoHostRewrite === undefined ? {} : { auto_host_rewrite: autoHostRewrite }),
    },
  };
  const virtualHosts = base.virtual_hosts as JsonObject[];
  return { ...base, virtual_hosts: [{ ...virtualHosts[0], routes: [route] }] };
}

function rpc(client: grpc.Client, options: grpc.CallOptions = {}): Promise<string> {
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest<Buffer, string>(
      ECHO_PATH,
      (b: Buffer) => b,
      (b: Buffer) => b.toString(),
      Buffer.alloc(0),
      new grpc.Metadata(),
      { deadline: Date.now() + 5000, ...options },
      (error, answer) => (error ? reject(error) : resolve(answer!)),
    ),
  );
}

describe('e2e: authority rewriting (A81)', () => {
  let server: ManagementServer;
  let backends: AuthorityBackend[];
  const clients: grpc.Client[] = [];
  beforeEach(async () => {
    register();
    server = await ManagementServer.start();
    backends = [await startBackend('a'), await startBackend('b')];
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    for (const b of backends) b.close();
    await server.close();
  });

  function client(trusted: boolean, options: grpc.ChannelOptions = {}): grpc.Client {
    const bootstrap = server.bootstrap(trusted ? { serverFeatures: ['trusted_xds_server'] } : {});
    const c = new grpc.Client(`xds:///${SERVICE}`, grpc.credentials.createInsecure(), {
      [BOOTSTRAP_OPTION]: JSON.stringify(bootstrap),
      'grpc.use_local_subchannel_pool': 1,
      ...options,
    });
    clients.push(c);
    return c;
  }

  function serve(routes: JsonObject, clusters: JsonObject[], endpoints: JsonObject[]): void {
    server.setResources('listener', [listener(SERVICE, 'echo-routes')]);
    server.setResources('route', [routes]);
    server.setResources('cluster', clusters);
    server.setResources('endpoint', endpoints);
  }

  function serveEds(autoHostRewrite: boolean | undefined, hostnames: (string | undefined)[]) {
    serve(
      routesTo('echo', autoHostRewrite),
      [edsCluster('echo')],
      [
        assignment(
          'echo',
          backends.map((b, i) => ({
            port: b.port,
            ...(hostnames[i] && { hostname: hostnames[i] }),
          })),
        ),
      ],
    );
  }

  /** What the backends answered to `n` RPCs: "backend authority", each once. */
  async function answers(c: grpc.Client, n: number, options?: grpc.CallOptions) {
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) seen.add(await rpc(c, options));
    return [...seen].sort();
  }

  it('sends the picked endpoint’s hostname as :authority, from a trusted server', async () => {
    serveEds(true, ['a.backend.test', 'b.backend.test:8443']);
    // Round robin over both: each RPC carries the hostname of the endpoint it went to.
    assert.deepStrictEqual(await answers(client(true), 10), [
      'a a.backend.test',
      'b b.backend.test:8443',
    ]);
  });

  it('leaves :authority alone when the server is not trusted', async () => {
    serveEds(true, ['a.backend.test', 'b.backend.test']);
    assert.deepStrictEqual(await answers(client(false), 10), [`a ${SERVICE}`, `b ${SERVICE}`]);
  });

  it('leaves :authority alone when the route does not ask for it', async () => {
    serveEds(false, ['a.backend.test', 'b.backend.test']);
    assert.deepStrictEqual(await answers(client(true), 10), [`a ${SERVICE}`, `b ${SERVICE}`]);
  });

  it('leaves :authority alone for an endpoint with no hostname', async () => {
    serveEds(true, ['a.backend.test', undefined]);
    assert.deepStrictEqual(await answers(client(true), 10), ['a a.backend.test', `b ${SERVICE}`]);
  });

  it('rewrites the channel’s grpc.default_authority too, but not a host the call set', async () => {
    serveEds(true, ['a.backend.test', 'b.backend.test']);
    const c = client(true, { 'grpc.default_authority': SERVICE });
    assert.deepStrictEqual(await answers(c, 10), ['a a.backend.test', 'b b.backend.test']);
    // A81: an authority the application sets on the call wins over the rewrite.
    assert.deepStrictEqual(await answers(c, 10, { host: 'chosen.by.app' }), [
      'a chosen.by.app',
      'b chosen.by.app',
    ]);
  });

  it('stops rewriting when a new route version turns it off', async () => {
    serveEds(true, ['a.backend.test', 'b.backend.test']);
    const c = client(true);
    assert.deepStrictEqual(await answers(c, 10), ['a a.backend.test', 'b b.backend.test']);
    server.setResources('route', [routesTo('echo', false)]);
    const deadline = Date.now() + 5000;
    let seen: string[] = [];
    while (Date.now() < deadline) {
      seen = await answers(c, 4);
      if (seen.every((s) => s.endsWith(` ${SERVICE}`))) break;
    }
    assert.ok(
      seen.every((s) => s.endsWith(` ${SERVICE}`)),
      `still rewritten: ${seen.join(', ')}`,
    );
  });

  it('uses a logical DNS cluster’s name and port as the hostname', async () => {
    const port = backends[0]!.port;
    serve(routesTo('dns', true), [logicalDnsCluster('dns', '127.0.0.1', port)], []);
    assert.deepStrictEqual(await answers(client(true), 3), [`a 127.0.0.1:${port}`]);
  });
});
