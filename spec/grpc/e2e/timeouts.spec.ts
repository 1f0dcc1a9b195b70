// End to end: max_stream_duration as the RPC's deadline (gRFC A31), from the route or from the
// Listener's HttpConnectionManager, and a Listener update that changes only the HCM (same RDS
// name) taking effect at once.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { edsCluster, endpoints } from '../../../lib/testing';
import { waitUntil } from '../helpers/backends';
import {
  everything,
  rpcError,
  serviceListener,
  startXdsEnv,
  waitForAllOn,
  type XdsEnv,
} from '../helpers/xds-env';

const HCM_LIMIT = { common_http_protocol_options: { max_stream_duration: '0.2s' } };

/** How an RPC against the hanging backend ends, and after how long. */
async function hangingRpc(client: grpc.Client, deadlineMs: number) {
  const start = Date.now();
  const error = await rpcError(client, { deadlineMs });
  return { code: error.code, details: error.details, ms: Date.now() - start };
}

describe('e2e: max_stream_duration', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a']);
  });
  afterEach(() => env.close());

  /** Serves cluster "echo" over backend a; answers until the spec makes it hang. */
  function serve(options: Parameters<XdsEnv['serve']>[0] extends infer S ? Partial<S> : never) {
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a') }])],
      ...options,
    });
  }

  it("the route's max_stream_duration ends an RPC to a hanging backend with DEADLINE_EXCEEDED", async () => {
    serve({
      routes: [everything('echo', { max_stream_duration: { max_stream_duration: '0.2s' } })],
    });
    const client = env.client();
    await waitForAllOn(client, 'a', { concurrency: 1, batch: 1 });
    env.backends.a!.behaviour = 'hang';
    const rpc = await hangingRpc(client, 5000);
    assert.equal(rpc.code, grpc.status.DEADLINE_EXCEEDED, rpc.details);
    assert.ok(rpc.ms >= 150 && rpc.ms < 2000, `ended after ${rpc.ms} ms, expected about 200`);
  });

  it("the Listener's HCM max_stream_duration applies when the route has none", async () => {
    serve({ hcm: HCM_LIMIT });
    const client = env.client();
    await waitForAllOn(client, 'a', { concurrency: 1, batch: 1 });
    env.backends.a!.behaviour = 'hang';
    const rpc = await hangingRpc(client, 5000);
    assert.equal(rpc.code, grpc.status.DEADLINE_EXCEEDED, rpc.details);
    assert.ok(rpc.ms >= 150 && rpc.ms < 2000, `ended after ${rpc.ms} ms, expected about 200`);
  });

  it("the route's max_stream_duration of 0 means no limit, overriding the HCM's", async () => {
    serve({
      hcm: HCM_LIMIT,
      routes: [everything('echo', { max_stream_duration: { max_stream_duration: '0s' } })],
    });
    const client = env.client();
    await waitForAllOn(client, 'a', { concurrency: 1, batch: 1 });
    env.backends.a!.behaviour = 'hang';
    const rpc = await hangingRpc(client, 500);
    assert.equal(rpc.code, grpc.status.DEADLINE_EXCEEDED, rpc.details);
    assert.ok(rpc.ms >= 450, `ended after ${rpc.ms} ms: the application's 500 ms deadline`);
  });

  it('a Listener update that changes only the HCM (same RDS name) takes effect at once', async () => {
    serve({});
    const client = env.client();
    await waitForAllOn(client, 'a', { concurrency: 1, batch: 1 });
    env.backends.a!.behaviour = 'hang';
    const before = await hangingRpc(client, 400);
    assert.ok(before.ms >= 350, `no limit yet: ended after ${before.ms} ms`);

    const mark = env.server.requests.length;
    env.server.setResources('listener', [serviceListener(HCM_LIMIT)]);
    await env.server.waitForRequest(
      (r) => r.typeUrl.endsWith('.Listener') && r.versionInfo === '2' && !r.errorDetail,
      { after: mark },
    );
    // Bounded: an implementation that keeps the old HCM until the routes change never gets here.
    let last = before;
    await waitUntil(
      `RPCs end after about 200 ms (last: ${JSON.stringify(last)})`,
      async () => {
        last = await hangingRpc(client, 800);
        return last.code === grpc.status.DEADLINE_EXCEEDED && last.ms < 600;
      },
      3000,
    );
    // Nothing else changed: the route configuration was not sent again.
    const routeResponses = env.server.responses.filter((r) =>
      r.typeUrl.endsWith('RouteConfiguration'),
    );
    assert.equal(routeResponses.length, 1);
  });
});
