// End to end: what RPCs see when the control plane misbehaves (gRFC A46, A54, A57, A88): a
// NACKed update or an outage never breaks RPCs that were working; a deleted Listener and a
// route that cannot forward fail RPCs with UNAVAILABLE and a message that says why.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { edsCluster, endpoints } from '../../../lib/testing';
import { RESOURCE_TIMEOUT_OPTION } from '../../../lib/grpc';
import {
  SERVICE,
  UNAVAILABLE,
  rpcError,
  routes,
  sendRpc,
  sendRpcs,
  serviceListener,
  show,
  startXdsEnv,
  waitForAllOn,
  waitForDistribution,
  waitForFailure,
  type XdsEnv,
} from '../helpers/xds-env';

/** RPCs sent back to back until stopped, counted by where they landed. */
function steadyLoad(client: grpc.Client) {
  const counts = new Map<string, number>();
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const [key, n] of await sendRpcs(client, 10, { concurrency: 2 })) {
        counts.set(key, (counts.get(key) ?? 0) + n);
      }
    }
  })();
  return {
    counts,
    async stop() {
      running = false;
      await loop;
      return counts;
    },
  };
}

describe('e2e: control-plane failures', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b']);
  });
  afterEach(() => env.close());

  function serveTwoBackends() {
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a', 'b') }])],
    });
  }

  it('a NACKed cluster and a NACKed route configuration leave RPCs landing as before', async () => {
    serveTwoBackends();
    const client = env.client();
    await waitForDistribution(client, 'both backends answer', (c) => c.size === 2);
    const load = steadyLoad(client);

    const mark = env.server.requests.length;
    env.server.setResources('cluster', [{ ...edsCluster('echo'), lb_policy: 'RANDOM' }]);
    const clusterNack = await env.server.waitForRequest(
      (r) => r.typeUrl.endsWith('.Cluster') && r.errorDetail !== undefined,
      { after: mark },
    );
    assert.match(clusterNack.errorDetail!.message, /lb_policy/);
    env.server.setResources('route', [
      routes([{ match: { safe_regex: { regex: '(' } }, route: { cluster: 'echo' } }]),
    ]);
    await env.server.waitForRequest(
      (r) => r.typeUrl.endsWith('.RouteConfiguration') && r.errorDetail !== undefined,
      { after: mark },
    );

    const after = await sendRpcs(client, 100);
    const during = await load.stop();
    assert.equal(during.get(UNAVAILABLE), undefined, `no RPC failed: ${show(during)}`);
    assert.deepEqual([...after.keys()].sort(), ['a', 'b'], show(after));
    assert.equal((after.get('a') ?? 0) + (after.get('b') ?? 0), 100, show(after));
  });

  it('RPCs keep working on the cached configuration through a control-plane outage', async () => {
    serveTwoBackends();
    const client = env.client();
    await waitForDistribution(client, 'both backends answer', (c) => c.size === 2);
    const load = steadyLoad(client);

    // Streams fail, and every new one fails before any response.
    env.server.setStreamFault({
      endBeforeResponseWith: { code: grpc.status.UNAVAILABLE, details: 'outage' },
    });
    env.server.endStreams(grpc.status.UNAVAILABLE, 'outage');
    const duringFault = await sendRpcs(client, 100);
    assert.deepEqual([...duringFault.keys()].sort(), ['a', 'b'], show(duringFault));

    // The server goes away entirely.
    await env.server.close();
    const afterClose = await sendRpcs(client, 100);
    assert.deepEqual([...afterClose.keys()].sort(), ['a', 'b'], show(afterClose));
    assert.equal((afterClose.get('a') ?? 0) + (afterClose.get('b') ?? 0), 100);

    const during = await load.stop();
    assert.equal(during.size, 2, `every RPC answered by a or b: ${show(during)}`);
  });

  it('a deleted Listener fails RPCs with UNAVAILABLE naming it and the xDS node id, until it returns', async () => {
    serveTwoBackends();
    const client = env.client();
    await waitForDistribution(client, 'both backends answer', (c) => c.size === 2);

    env.server.removeResource('listener', SERVICE);
    const error = await waitForFailure(client, 'RPCs fail once the Listener is gone');
    assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
    assert.match(error.details, new RegExp(`"${SERVICE.replace('.', '\\.')}"`));
    assert.match(error.details, /does not exist/);
    assert.match(error.details, /xDS node id: test-node/);

    env.server.setResources('listener', [serviceListener()]);
    await waitForDistribution(client, 'RPCs answered again', (c) => !c.has(UNAVAILABLE));
  });

  it('a Listener that never existed fails RPCs with UNAVAILABLE naming it once the does-not-exist timer fires', async () => {
    const client = env.client({ [RESOURCE_TIMEOUT_OPTION]: 200 });
    const error = await rpcError(client, { deadlineMs: 3000 });
    assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
    assert.match(error.details, /Listener "echo\.test" does not exist: not received within 200 ms/);
    assert.match(error.details, /xDS node id: test-node/);
  });

  it("a deleted cluster fails only its route's RPCs, naming the cluster; other routes keep working", async () => {
    const onHeader = { prefix: '', headers: [{ name: 'x-to-b', present_match: true }] };
    env.serve({
      clusters: [edsCluster('A'), edsCluster('B')],
      endpoints: [
        endpoints('A', [{ addresses: env.addresses('a') }]),
        endpoints('B', [{ addresses: env.addresses('b') }]),
      ],
      routes: [
        { match: onHeader, route: { cluster: 'B' } },
        { match: { prefix: '' }, route: { cluster: 'A' } },
      ],
    });
    const client = env.client();
    const toB = new grpc.Metadata();
    toB.set('x-to-b', '1');
    await waitForAllOn(client, 'b', { metadata: toB });
    await waitForAllOn(client, 'a');

    env.server.removeResource('cluster', 'B');
    const error = await waitForFailure(client, 'RPCs to cluster B fail', () => true, {
      metadata: toB,
    });
    assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
    assert.match(error.details, /"B"/);
    assert.match(error.details, /xDS node id: test-node/);
    await waitForAllOn(client, 'a');
  });

  it('a cluster whose EDS resource does not exist fails its RPCs naming it, with the node id once', async () => {
    env.serve({ clusters: [edsCluster('A')] }); // no ClusterLoadAssignment for A
    const client = env.client({ [RESOURCE_TIMEOUT_OPTION]: 100 });
    const error = await waitForFailure(client, 'RPCs to A fail', (e) => /EDS/.test(e.details));
    assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
    assert.match(
      error.details,
      /cluster "A" has no usable endpoints: .*EDS resource "A".*does not exist/,
    );
    assert.equal(error.details.match(/xDS node id/g)?.length, 1, error.details);
  });

  it('a name the client cannot send (a 20 KB service_name) fails RPCs and leaves the process up', async () => {
    const uncaught: unknown[] = [];
    const record = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', record);
    try {
      const huge = 's'.repeat(20 * 1024);
      env.serve({ clusters: [edsCluster('A', { serviceName: huge })] });
      const error = await rpcError(env.client(), { deadlineMs: 3000 });
      assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
      assert.match(error.details, /resource name is 20480 bytes long/);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(uncaught, []);
    } finally {
      process.off('uncaughtException', record);
    }
  });

  it('a route with a non-forwarding or unsupported action fails its RPCs with UNAVAILABLE', async () => {
    const present = (name: string) => ({ prefix: '', headers: [{ name, present_match: true }] });
    env.serve({
      clusters: [edsCluster('echo')],
      endpoints: [endpoints('echo', [{ addresses: env.addresses('a') }])],
      routes: [
        { match: present('x-redirect'), redirect: {} },
        { match: present('x-nfa'), non_forwarding_action: {} },
        { match: present('x-direct'), direct_response: { status: 200 } },
        { match: { prefix: '' }, route: { cluster: 'echo' } },
      ],
    });
    const client = env.client();
    await waitForAllOn(client, 'a');

    const md = (key: string) => {
      const m = new grpc.Metadata();
      m.set(key, '1');
      return m;
    };
    for (const [key, action] of [
      ['x-redirect', 'redirect'],
      ['x-nfa', 'non_forwarding'],
      ['x-direct', 'direct_response'],
    ] as const) {
      const error = await sendRpc(client, { metadata: md(key) }).then(
        (name) => assert.fail(`answered by ${name}`),
        (e: grpc.ServiceError) => e,
      );
      assert.equal(error.code, grpc.status.UNAVAILABLE, error.details);
      assert.match(error.details, new RegExp(action));
      assert.match(error.details, /xDS node id/);
    }
    // The other route still forwards.
    assert.equal(await sendRpc(client), 'a');
  });
});
