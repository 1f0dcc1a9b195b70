// End to end, gRFC A31: a cluster the routes stop naming stays in the channel's configuration
// (its CDS subscription kept) while an RPC that chose it has not been committed, and goes when
// that RPC is committed or ends. An RPC that ends before any attempt (here cancelled during a
// fault filter's delay, gRFC A33) is never committed by grpc-js: only the end of the call lets
// that cluster go.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { edsCluster, endpoints, type JsonObject } from '../../../lib/testing';
import { ECHO_PATH, waitUntil } from '../helpers/backends';
import { everything, routes, startXdsEnv, waitForAllOn, type XdsEnv } from '../helpers/xds-env';

const CLUSTER_TYPE = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const ROUTE_TYPE = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';
const FAULT_URL = 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault';
const ROUTER_URL = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';

/** HCM fields: a fault filter that delays an RPC by its x-envoy-fault-delay-request ms. */
const HEADER_DELAY: JsonObject = {
  http_filters: [
    {
      name: 'fault',
      typed_config: {
        '@type': FAULT_URL,
        delay: { header_delay: {}, percentage: { numerator: 100, denominator: 'HUNDRED' } },
      },
    },
    { name: 'router', typed_config: { '@type': ROUTER_URL } },
  ],
};

/** RPCs with `x-cluster: held` go to the cluster `held`, every other RPC to `b`. */
const HELD_ROUTE: JsonObject = {
  match: { prefix: '', headers: [{ name: 'x-cluster', exact_match: 'held' }] },
  route: { cluster: 'held' },
};

/** An RPC to `held` left running until cancelled; `ended` resolves with its status. */
interface HeldRpc {
  readonly call: grpc.ClientUnaryCall;
  /** Resolves with the RPC's status code. */
  readonly ended: Promise<number>;
}

/** Starts an RPC to `held`, with a fault delay of `delayMs` when given (HEADER_DELAY). */
function startHeldRpc(client: grpc.Client, delayMs?: number): HeldRpc {
  const metadata = new grpc.Metadata();
  metadata.set('x-cluster', 'held');
  if (delayMs !== undefined) metadata.set('x-envoy-fault-delay-request', String(delayMs));
  let call: grpc.ClientUnaryCall | undefined;
  const ended = new Promise<number>((resolve) => {
    call = client.makeUnaryRequest<Buffer, Buffer>(
      ECHO_PATH,
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.alloc(0),
      metadata,
      { deadline: Date.now() + 30_000 },
      (error) => resolve(error ? error.code : grpc.status.OK),
    );
  });
  return { call: call!, ended };
}

describe('e2e: an RPC holds its cluster until it is committed or ends (A31)', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['b', 'held']);
  });
  afterEach(() => env.close());

  /** Serves clusters `held` and `b`, `held` for RPCs that ask; returns once RPCs reach `b`. */
  async function serveWithHeldRoute(hcm?: JsonObject): Promise<grpc.Client> {
    env.serve({
      ...(hcm ? { hcm } : {}),
      clusters: [edsCluster('held'), edsCluster('b')],
      endpoints: [
        endpoints('held', [{ addresses: env.addresses('held') }]),
        endpoints('b', [{ addresses: env.addresses('b') }]),
      ],
      routes: [HELD_ROUTE, everything('b')],
    });
    const client = env.client();
    await waitForAllOn(client, 'b'); // the configuration is in use
    return client;
  }

  /**
   * Drops `held` from the routes while `rpc` runs: `held` stays subscribed until `rpc` is
   * cancelled, and goes then.
   */
  async function expectHeldUntilEnd(client: grpc.Client, rpc: HeldRpc): Promise<void> {
    await dropHeldRoute(client);
    assert.ok(subscribed().includes('held'), `the RPC holds "held": ${subscribed().join(', ')}`);
    rpc.call.cancel();
    assert.equal(await rpc.ended, grpc.status.CANCELLED);
    await waitUntil(
      () => `"held" unsubscribed once its RPC ended: ${subscribed().join(', ')}`,
      () => !subscribed().includes('held'),
    );
  }

  /**
   * Serves routes without `held`, and returns once the client has ACKed them and RPCs have gone
   * through the configuration built on them.
   */
  async function dropHeldRoute(client: grpc.Client): Promise<void> {
    const routeRequests = () => env.server.requests.filter((r) => r.typeUrl === ROUTE_TYPE).length;
    const before = routeRequests();
    env.server.setResources('route', [routes([everything('b')])]);
    await waitUntil('the new routes ACKed', () => routeRequests() > before);
    await waitForAllOn(client, 'b');
  }

  /** The clusters the client's last CDS request subscribes to. */
  const subscribed = (): readonly string[] =>
    env.server.requests.filter((r) => r.typeUrl === CLUSTER_TYPE).at(-1)?.resourceNames ?? [];

  it('an RPC cancelled during a fault delay, before any attempt, keeps its cluster after the routes drop it, and lets it go when it ends', async () => {
    const client = await serveWithHeldRoute(HEADER_DELAY);
    const rpc = startHeldRpc(client, 60_000); // routed to `held` at once, then delayed

    await expectHeldUntilEnd(client, rpc);
  });

  it('a running RPC keeps its cluster after the routes drop it, and lets it go when it ends', async () => {
    env.backends['held']!.behaviour = 'hang';
    const client = await serveWithHeldRoute();
    const rpc = startHeldRpc(client);
    await waitUntil('the RPC reached "held"', () => env.backends['held']!.rpcs > 0);

    await expectHeldUntilEnd(client, rpc);
  });
});
