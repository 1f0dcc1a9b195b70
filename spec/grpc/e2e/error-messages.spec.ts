// Every error the plugin lets an application see — an RPC's status details, an XdsServer's
// serving status, a cluster-tree watcher's error — names the xDS node id exactly once, as
// grpc-go writes it (`[xDS node id: …]: reason`, decision 0030), and an LB config error names
// its policy once. One error kind per case: each reaches the application by its own path.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { experimental } from '@grpc/grpc-js';
import { XdsClient, watchClusterTree } from '../../../lib';
import {
  BOOTSTRAP_OPTION,
  RESOURCE_TIMEOUT_OPTION,
  XdsServer,
  register,
  type ServingStatus,
} from '../../../lib/grpc';
// Internal on purpose: the names the plugin registers its LB policies under, as errors print them.
import { POLICY } from '../../../lib/grpc/names';
import {
  ManagementServer,
  edsCluster,
  endpoints,
  routeConfig,
  serverListener,
} from '../../../lib/testing';
import { newClient, waitUntil } from '../helpers/backends';
import {
  ROUTE_NAME,
  SERVICE,
  rpcError,
  startXdsEnv,
  waitForFailure,
  type XdsEnv,
} from '../helpers/xds-env';
import {
  bindLoopback,
  rpcError as serverRpcError,
  serviceHandlers,
} from '../helpers/xds-server-env';
import { SERVICE as SERVER_SERVICE, UNROUTED_PATH, OTHER_PATH } from '../helpers/xds-server-env';

const NODE = 'test-node';

/** The node id once, at the start, as grpc-go writes it. */
function assertNodeIdOnce(text: string, what: string): void {
  assert.equal(text.match(/xDS node id/g)?.length, 1, `${what}: the node id once in: ${text}`);
  assert.ok(text.startsWith(`[xDS node id: ${NODE}]: `), `${what}: grpc-go's form: ${text}`);
}

describe('error messages name the xDS node id once: RPCs of a channel', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a']);
  });
  afterEach(() => env.close());

  const client = () => env.client({ [RESOURCE_TIMEOUT_OPTION]: 100 });
  const echoEndpoints = () => [endpoints('echo', [{ addresses: env.addresses('a') }])];

  async function failureOf(what: string, matches: RegExp): Promise<string> {
    const error = await waitForFailure(client(), what, (e) => matches.test(e.details));
    assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
    return error.details;
  }

  it('a Listener that does not exist', async () => {
    assertNodeIdOnce(await failureOf('no Listener', /does not exist/), 'Listener');
  });

  it('a Listener with no api_listener', async () => {
    env.server.setResources('listener', [serverListener(SERVICE, '127.0.0.1', 1)]);
    assertNodeIdOnce(await failureOf('server Listener', /api_listener/), 'api_listener');
  });

  it('an invalid RouteConfiguration (a domain "")', async () => {
    env.serve({ clusters: [edsCluster('echo')], endpoints: echoEndpoints() });
    env.server.setResources('route', [
      { name: ROUTE_NAME, virtual_hosts: [{ name: 'vh', domains: [''], routes: [] }] },
    ]);
    assertNodeIdOnce(await failureOf('invalid routes', /unsupported value ""/), 'routes');
  });

  it('no virtual host for the authority', async () => {
    env.serve({ clusters: [edsCluster('echo')], endpoints: echoEndpoints() });
    env.server.setResources('route', [
      routeConfig(ROUTE_NAME, { cluster: 'echo', domains: ['x'] }),
    ]);
    assertNodeIdOnce(await failureOf('no virtual host', /no virtual host/), 'virtual host');
  });

  it('an invalid Cluster', async () => {
    env.serve({ clusters: [{ ...edsCluster('echo'), lb_policy: 'RANDOM' }] });
    assertNodeIdOnce(await failureOf('invalid cluster', /lb_policy/), 'invalid Cluster');
  });

  it('a Cluster that does not exist', async () => {
    env.serve({ clusters: [], routes: [{ match: { prefix: '' }, route: { cluster: 'gone' } }] });
    assertNodeIdOnce(await failureOf('no cluster', /"gone"/), 'missing Cluster');
  });

  it('a cluster with no endpoints', async () => {
    env.serve({ clusters: [edsCluster('echo')] });
    assertNodeIdOnce(await failureOf('no endpoints', /no usable endpoints/), 'no endpoints');
  });

  it('a route that cannot forward', async () => {
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: echoEndpoints(),
      routes: [{ match: { prefix: '' }, non_forwarding_action: {} }],
    });
    assertNodeIdOnce(await failureOf('non-forwarding route', /non_forwarding/), 'route');
  });

  it('a bootstrap error reaches RPCs as UNAVAILABLE, with no node to name', async () => {
    const bad = env.client({ [BOOTSTRAP_OPTION]: '{"xds_servers": []}' });
    const error = await rpcError(bad, { deadlineMs: 3000 });
    assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
    assert.doesNotMatch(error.details, /xDS node id/);
  });
});

describe('error messages name the xDS node id once: watchers and LB configs', () => {
  it('a cluster-tree watcher of an invalid cluster', async () => {
    const server = await ManagementServer.start();
    const client = new XdsClient({ bootstrap: server.bootstrap({ nodeId: NODE }) });
    try {
      server.setResources('cluster', [{ ...edsCluster('bad'), lb_policy: 'RANDOM' }]);
      const error = await new Promise<Error>((resolve) => {
        watchClusterTree(client, 'bad', { onUpdate: () => {}, onError: resolve });
      });
      assertNodeIdOnce(error.message, 'cluster tree');
    } finally {
      client.close();
      await server.close();
    }
  });

  it('an LB config error names its policy once', () => {
    register();
    let checked = 0;
    for (const name of Object.values(POLICY)) {
      let message = '';
      try {
        experimental.parseLoadBalancingConfig({ [name]: 'not an object' as unknown as object });
      } catch (e) {
        message = (e as Error).message;
      }
      if (message === '') continue; // a policy with nothing to configure
      const short = name.replace('xds_client.', '');
      assert.equal(message.split(short).length - 1, 1, `${name} named once in: ${message}`);
      checked++;
    }
    assert.ok(checked >= 5, `only ${checked} policies refused a config that is not an object`);
  });
});

describe('error messages name the xDS node id once: XdsServer', () => {
  const TEMPLATE = 'grpc/server?xds.resource.listening_address=%s';
  let management: ManagementServer;
  let server: XdsServer;
  let statuses: ServingStatus[];
  let port: number;
  let name: string;
  let client: grpc.Client;

  beforeEach(async () => {
    management = await ManagementServer.start();
    statuses = [];
    server = new XdsServer({
      [BOOTSTRAP_OPTION]: JSON.stringify(
        management.bootstrap({ nodeId: NODE, serverListenerResourceNameTemplate: TEMPLATE }),
      ),
      [RESOURCE_TIMEOUT_OPTION]: 100,
      onServingStatusUpdate: (_at, status) => statuses.push(status),
    });
    server.addService(SERVER_SERVICE, serviceHandlers().handlers);
    port = await bindLoopback(server);
    name = TEMPLATE.replace('%s', `127.0.0.1:${port}`);
    client = newClient(`127.0.0.1:${port}`);
  });

  afterEach(async () => {
    client.close();
    server.forceShutdown();
    await management.close();
  });

  it('the serving status of a Listener that does not exist', async () => {
    await waitUntil('NOT_SERVING reported', () => statuses.at(-1)?.serving === false);
    assertNodeIdOnce(statuses.at(-1)!.error!.message, 'serving status');
  });

  it('the serving status of a Listener for another address', async () => {
    management.setResource('listener', serverListener(name, '127.0.0.1', port + 1));
    await waitUntil('NOT_SERVING reported', () => statuses.at(-1)?.serving === false);
    assertNodeIdOnce(statuses.at(-1)!.error!.message, 'serving status');
  });

  it('RPCs refused for want of routes, or of a route that serves', async () => {
    management.setResource(
      'listener',
      serverListener(name, '127.0.0.1', port, {
        routeConfigName: 'server-routes',
      }),
    );
    await waitUntil('SERVING reported', () => statuses.at(-1)?.serving === true);
    const noRoutes = await serverRpcError(client, OTHER_PATH);
    assert.equal(noRoutes.code, grpc.status.UNAVAILABLE, noRoutes.details);
    assertNodeIdOnce(noRoutes.details, 'RDS missing');

    management.setResource('route', {
      name: 'server-routes',
      virtual_hosts: [
        {
          name: 'vh',
          domains: ['*'],
          routes: [
            { match: { path: OTHER_PATH }, route: { cluster: 'x' } },
            { match: { path: '/test.Echo/Echo' }, non_forwarding_action: {} },
          ],
        },
      ],
    });
    await waitUntil('routes applied', async () => {
      const e = await serverRpcError(client, OTHER_PATH);
      return /non_forwarding/.test(e.details);
    });
    for (const path of [OTHER_PATH, UNROUTED_PATH]) {
      const error = await serverRpcError(client, path);
      assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
      assertNodeIdOnce(error.details, path);
    }
  });
});
