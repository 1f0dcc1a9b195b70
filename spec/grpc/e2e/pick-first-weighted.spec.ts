// End to end: gRFC A113 through real grpc-js channels on xds:///echo.test. A Cluster whose
// policy is PickFirst with `shuffle_address_list` shuffles its endpoints by weight (the
// locality's share times the endpoint's), so a new channel's first pick, where all its RPCs
// then go, follows the weights; every endpoint can be first. Each channel is new, with its own
// subchannel pool, so no connection is shared between them. The weighted cases use weights a
// million to one: a spec that sees the light endpoint first fails once in 10^5 runs.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { edsCluster, type JsonObject } from '../../../lib/testing';
import { sendRpc, startXdsEnv, type XdsEnv } from '../helpers/xds-env';

const PICK_FIRST_SHUFFLED = {
  '@type': 'type.googleapis.com/envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst',
  shuffle_address_list: true,
};

function shuffledPickFirstCluster(name: string): JsonObject {
  return {
    ...edsCluster(name),
    load_balancing_policy: {
      policies: [{ typed_extension_config: { name: 'pf', typed_config: PICK_FIRST_SHUFFLED } }],
    },
  };
}

/** A ClusterLoadAssignment: localities in order, each with its endpoints and their weights. */
function assignment(
  cluster: string,
  localities: readonly {
    readonly weight: number;
    readonly endpoints: readonly { address: string; weight?: number }[];
  }[],
): JsonObject {
  return {
    cluster_name: cluster,
    endpoints: localities.map((l, i) => ({
      locality: { region: 'r', zone: `z${i}`, sub_zone: '' },
      load_balancing_weight: l.weight,
      lb_endpoints: l.endpoints.map((e) => {
        const [host, port] = e.address.split(':');
        return {
          endpoint: { address: { socket_address: { address: host, port_value: Number(port) } } },
          load_balancing_weight: e.weight ?? 1,
        };
      }),
    })),
  };
}

describe('e2e: pick_first weighted shuffling (A113)', () => {
  let env: XdsEnv;
  beforeEach(async () => {
    env = await startXdsEnv(['a', 'b']);
  });
  afterEach(() => env.close());

  /** Where a new channel's first RPC lands; the channel is closed after it. */
  async function firstPick(): Promise<string> {
    const client = env.client();
    try {
      return await sendRpc(client);
    } finally {
      client.close();
    }
  }

  it('lets either of two equal endpoints be a channel’s first pick', async () => {
    const [a, b] = env.addresses('a', 'b');
    env.serve({
      clusters: [shuffledPickFirstCluster('echo')],
      endpoints: [
        assignment('echo', [{ weight: 1, endpoints: [{ address: a! }, { address: b! }] }]),
      ],
    });
    // grpc-js's own shuffle never moves the second of two addresses first: every channel
    // would pick a. Each channel here picks b with probability 1/2; 60 all on a: 2^-60.
    const seen = new Set<string>();
    for (let i = 0; i < 60 && seen.size < 2; i++) seen.add(await firstPick());
    assert.deepStrictEqual([...seen].sort(), ['a', 'b']);
  });

  it('puts the heavier endpoint of a locality first', async () => {
    const [a, b] = env.addresses('a', 'b');
    env.serve({
      clusters: [shuffledPickFirstCluster('echo')],
      endpoints: [
        assignment('echo', [
          { weight: 1, endpoints: [{ address: a! }, { address: b!, weight: 1_000_000 }] },
        ]),
      ],
    });
    const picks: string[] = [];
    for (let i = 0; i < 10; i++) picks.push(await firstPick());
    assert.deepStrictEqual(picks, Array<string>(10).fill('b'));
  });

  it('weighs an endpoint by its locality too', async () => {
    const [a, b] = env.addresses('a', 'b');
    env.serve({
      clusters: [shuffledPickFirstCluster('echo')],
      endpoints: [
        assignment('echo', [
          // a's endpoint weight is higher, but its locality's share is a millionth.
          { weight: 1, endpoints: [{ address: a!, weight: 1000 }] },
          { weight: 1_000_000, endpoints: [{ address: b! }] },
        ]),
      ],
    });
    const picks: string[] = [];
    for (let i = 0; i < 10; i++) picks.push(await firstPick());
    assert.deepStrictEqual(picks, Array<string>(10).fill('b'));
  });
});
