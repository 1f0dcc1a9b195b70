// End to end: aggregate clusters (gRFC A37, A75): an aggregate is a priority list of its leaf
// clusters, EDS and LOGICAL_DNS alike; RPCs go to the first leaf that works.
import { afterEach, beforeEach, describe, it } from 'node:test';
import { aggregateCluster, edsCluster, endpoints, logicalDnsCluster } from '../../../lib/testing';
import { startXdsEnv, waitForAllOn, type XdsEnv } from '../helpers/xds-env';

describe('e2e: aggregate clusters', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['b', 'c', 'dns']);
  });
  afterEach(() => env.close());

  it('fails over EDS → EDS → LOGICAL_DNS (localhost) and back', async () => {
    env.serve({
      clusters: [
        aggregateCluster('agg', ['B', 'C', 'D']),
        edsCluster('B'),
        edsCluster('C'),
        logicalDnsCluster('D', 'localhost', env.backends.dns!.port),
      ],
      endpoints: [
        endpoints('B', [{ addresses: env.addresses('b') }]),
        endpoints('C', [{ addresses: env.addresses('c') }]),
      ],
    });
    const client = env.client();
    await waitForAllOn(client, 'b');

    await env.backends.b!.stop();
    await waitForAllOn(client, 'c');

    await env.backends.c!.stop();
    await waitForAllOn(client, 'dns');

    await env.backends.b!.start();
    await waitForAllOn(client, 'b');
  });

  it('an aggregate of two EDS clusters fails over when the first has no endpoints left', async () => {
    const service = {
      clusters: [aggregateCluster('agg', ['B', 'C']), edsCluster('B'), edsCluster('C')],
      endpoints: [
        endpoints('B', [{ addresses: env.addresses('b') }]),
        endpoints('C', [{ addresses: env.addresses('c') }]),
      ],
    };
    env.serve(service);
    const client = env.client();
    await waitForAllOn(client, 'b');
    env.server.setResources('endpoint', [
      endpoints('B', []),
      endpoints('C', [{ addresses: env.addresses('c') }]),
    ]);
    await waitForAllOn(client, 'c');
  });

  it('accepts an aggregate written Envoy-style with lb_policy CLUSTER_PROVIDED', async () => {
    env.serve({
      clusters: [
        { ...aggregateCluster('agg', ['B', 'C']), lb_policy: 'CLUSTER_PROVIDED' },
        edsCluster('B'),
        edsCluster('C'),
      ],
      endpoints: [
        endpoints('B', [{ addresses: env.addresses('b') }]),
        endpoints('C', [{ addresses: env.addresses('c') }]),
      ],
    });
    const client = env.client();
    await waitForAllOn(client, 'b');
    await env.backends.b!.stop();
    await waitForAllOn(client, 'c');
  });
});
