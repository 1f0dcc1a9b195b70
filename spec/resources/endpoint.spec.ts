// ClusterLoadAssignment decoding (gRFC A27, A61). Each rule has a valid case and an invalid one
// whose exact `path: message` is asserted.
//   1. Build an assignment from a readable fixture and encode it as a server would.
//   2. Decode it with endpointResourceType.decode(bytes, { server }).
//   3. Compare the whole update, or the exact list of errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { endpointResourceType, type EndpointUpdate } from '../../lib/resources/endpoint';
import { SERVER } from './fixtures/cluster-fixtures';
import {
  assignment,
  assignmentErrors,
  drop,
  encodeAssignment,
  lbEndpoint,
  locality,
  validAssignment,
} from './fixtures/endpoint-fixtures';

const UINT32_MAX = 4294967295;
const EP = 'endpoints[0].lb_endpoints[0]';
const SOCKET = `${EP}.endpoint.address.socket_address`;

/** The zones of each priority, for compact assertions on structure. */
function zones(update: EndpointUpdate): string[][] {
  return update.priorities.map((p) => p.map((l) => l.locality.zone));
}

/** An assignment with a single endpoint whose socket address has the given fields. */
function withSocket(socketAddress: Record<string, unknown>) {
  const endpoint = { endpoint: { address: { socketAddress } } };
  return assignment({ endpoints: [locality('z1', [endpoint])] });
}

describe('ClusterLoadAssignment: structure', () => {
  it('decodes a minimal assignment with every default', () => {
    const expected: EndpointUpdate = {
      clusterName: 'eds-a',
      priorities: [
        [
          {
            locality: { region: 'r', zone: 'z1', subZone: '' },
            weight: 1,
            endpoints: [
              { address: '10.0.0.1', port: 80, healthStatus: 'UNKNOWN', weight: 1 },
              { address: '10.0.0.2', port: 80, healthStatus: 'UNKNOWN', weight: 1 },
            ],
          },
        ],
      ],
      dropOverloads: [],
    };
    assert.deepStrictEqual(validAssignment(assignment()), expected);
  });

  it('accepts an assignment with no localities, and a locality with no endpoints', () => {
    assert.deepStrictEqual(validAssignment(assignment({ endpoints: [] })).priorities, []);
    const empty = validAssignment(assignment({ endpoints: [locality('z1', [])] }));
    assert.deepStrictEqual(empty.priorities[0]![0]!.endpoints, []);
  });

  it('rejects an empty cluster_name', () => {
    assert.deepStrictEqual(assignmentErrors(assignment({ clusterName: '' })), [
      'cluster_name: must be non-empty',
    ]);
  });

  it('drops localities with weight 0 or no weight (A27)', () => {
    const json = assignment({
      endpoints: [
        locality('zero', [lbEndpoint('10.0.0.1', 80)], { loadBalancingWeight: { value: 0 } }),
        locality('unset', [lbEndpoint('10.0.0.2', 80)], { loadBalancingWeight: undefined }),
        locality('kept', [lbEndpoint('10.0.0.3', 80)], { loadBalancingWeight: { value: 7 } }),
      ],
    });
    const update = validAssignment(json);
    assert.deepStrictEqual(zones(update), [['kept']]);
    assert.equal(update.priorities[0]![0]!.weight, 7);
  });

  it('requires the locality, even in a locality that would be dropped', () => {
    const json = assignment({
      endpoints: [{ loadBalancingWeight: { value: 0 }, lbEndpoints: [] }],
    });
    assert.deepStrictEqual(assignmentErrors(json), ['endpoints[0].locality: field not present']);
  });

  it('groups localities by priority, in the order sent', () => {
    const json = assignment({
      endpoints: [
        locality('b', [lbEndpoint('10.0.0.1', 80)], { priority: 1 }),
        locality('a', [lbEndpoint('10.0.0.2', 80)]),
        locality('c', [lbEndpoint('10.0.0.3', 80)], { priority: 1 }),
      ],
    });
    assert.deepStrictEqual(zones(validAssignment(json)), [['a'], ['b', 'c']]);
  });

  it('requires priorities contiguous from 0, naming the first missing one', () => {
    const at = (zone: string, priority: number, ip: string) =>
      locality(zone, [lbEndpoint(ip, 80)], { priority });
    const gap = assignment({ endpoints: [at('a', 0, '10.0.0.1'), at('b', 2, '10.0.0.2')] });
    assert.deepStrictEqual(assignmentErrors(gap), ['endpoints: missing priority 1']);
    const noZero = assignment({ endpoints: [at('a', 1, '10.0.0.1')] });
    assert.deepStrictEqual(assignmentErrors(noZero), ['endpoints: missing priority 0']);
    const huge = assignment({
      endpoints: [at('a', 0, '10.0.0.1'), at('b', UINT32_MAX, '10.0.0.2')],
    });
    assert.deepStrictEqual(assignmentErrors(huge), ['endpoints: missing priority 1']);
  });

  it('counts a priority whose localities were all dropped as missing', () => {
    const json = assignment({
      endpoints: [
        locality('a', [lbEndpoint('10.0.0.1', 80)], { priority: 0 }),
        locality('b', [lbEndpoint('10.0.0.2', 80)], {
          priority: 1,
          loadBalancingWeight: undefined,
        }),
        locality('c', [lbEndpoint('10.0.0.3', 80)], { priority: 2 }),
      ],
    });
    assert.deepStrictEqual(assignmentErrors(json), ['endpoints: missing priority 1']);
  });

  it('allows a locality in two priorities but not twice in one', () => {
    const twoPriorities = assignment({
      endpoints: [
        locality('a', [lbEndpoint('10.0.0.1', 80)]),
        locality('a', [lbEndpoint('10.0.0.2', 80)], { priority: 1 }),
      ],
    });
    assert.deepStrictEqual(zones(validAssignment(twoPriorities)), [['a'], ['a']]);
    const duplicate = assignment({
      endpoints: [
        locality('a', [lbEndpoint('10.0.0.1', 80)]),
        locality('a', [lbEndpoint('10.0.0.2', 80)]),
      ],
    });
    assert.deepStrictEqual(assignmentErrors(duplicate), [
      'endpoints[1]: duplicate locality {region="r", zone="a", sub_zone=""} in priority 0',
    ]);
  });

  it('limits the sum of locality weights in a priority to 2^32-1', () => {
    const weighted = (zone: string, ip: string, value: number) =>
      locality(zone, [lbEndpoint(ip, 80)], { loadBalancingWeight: { value } });
    const atLimit = assignment({
      endpoints: [weighted('a', '10.0.0.1', UINT32_MAX - 1), weighted('b', '10.0.0.2', 1)],
    });
    assert.equal(validAssignment(atLimit).priorities[0]!.length, 2);
    const over = assignment({
      endpoints: [weighted('a', '10.0.0.1', UINT32_MAX), weighted('b', '10.0.0.2', 1)],
    });
    assert.deepStrictEqual(assignmentErrors(over), [
      `endpoints: sum of locality weights in priority 0 exceeds ${UINT32_MAX}`,
    ]);
  });
});

describe('ClusterLoadAssignment: endpoints', () => {
  it('defaults the endpoint weight to 1 and keeps an explicit one', () => {
    const json = assignment({
      endpoints: [
        locality('z', [
          lbEndpoint('10.0.0.1', 80),
          lbEndpoint('10.0.0.2', 80, { loadBalancingWeight: { value: 5 } }),
        ]),
      ],
    });
    const weights = validAssignment(json).priorities[0]![0]!.endpoints.map((e) => e.weight);
    assert.deepStrictEqual(weights, [1, 5]);
  });

  it('rejects an endpoint weight of 0', () => {
    const json = assignment({
      endpoints: [
        locality('z', [lbEndpoint('10.0.0.1', 80, { loadBalancingWeight: { value: 0 } })]),
      ],
    });
    assert.deepStrictEqual(assignmentErrors(json), [
      `${EP}.load_balancing_weight: must be greater than 0`,
    ]);
  });

  it('limits the sum of endpoint weights in a locality to 2^32-1', () => {
    const heavy = (ip: string) =>
      lbEndpoint(ip, 80, { loadBalancingWeight: { value: UINT32_MAX } });
    const json = assignment({ endpoints: [locality('z', [heavy('10.0.0.1'), heavy('10.0.0.2')])] });
    assert.deepStrictEqual(assignmentErrors(json), [
      `endpoints[0].lb_endpoints: sum of endpoint weights exceeds ${UINT32_MAX}`,
    ]);
  });

  it('names every health status and omits endpoints with an unknown one', () => {
    const statuses = ['UNKNOWN', 'HEALTHY', 'UNHEALTHY', 'DRAINING', 'TIMEOUT', 'DEGRADED'];
    const endpoints = statuses.map((s, i) => lbEndpoint(`10.0.0.${i}`, 80, { healthStatus: s }));
    endpoints.push(lbEndpoint('10.0.0.99', 80, { healthStatus: 42 }));
    const update = validAssignment(assignment({ endpoints: [locality('z', endpoints)] }));
    const got = update.priorities[0]![0]!.endpoints.map((e) => e.healthStatus);
    assert.deepStrictEqual(got, statuses);
  });

  it('keeps hostname and additional_addresses (A61) only when set', () => {
    const endpoint = {
      endpoint: {
        address: { socketAddress: { address: '10.0.0.1', portValue: 80 } },
        hostname: 'backend-1',
        additionalAddresses: [
          { address: { socketAddress: { address: '2001:db8::1', portValue: 80 } } },
        ],
      },
    };
    const update = validAssignment(assignment({ endpoints: [locality('z', [endpoint])] }));
    assert.deepStrictEqual(update.priorities[0]![0]!.endpoints[0], {
      address: '10.0.0.1',
      port: 80,
      healthStatus: 'UNKNOWN',
      weight: 1,
      hostname: 'backend-1',
      additionalAddresses: [{ address: '2001:db8::1', port: 80 }],
    });
    const plain = validAssignment(assignment()).priorities[0]![0]!.endpoints[0]!;
    assert.ok(!('hostname' in plain) && !('additionalAddresses' in plain));
  });

  it('keeps a non-empty string hash_key of the envoy.lb metadata (A76), and ignores the rest', () => {
    const withMetadata = (filterMetadata: Record<string, unknown>, address: string) =>
      lbEndpoint(address, 80, { metadata: { filterMetadata } });
    const keyed = (value: Record<string, unknown>) => ({
      'envoy.lb': { fields: { hash_key: value } },
    });
    const update = validAssignment(
      assignment({
        endpoints: [
          locality('z', [
            withMetadata(keyed({ stringValue: 'pod-0' }), '10.0.0.1'),
            withMetadata(keyed({ stringValue: '' }), '10.0.0.2'),
            withMetadata(keyed({ numberValue: 7 }), '10.0.0.3'),
            withMetadata({ other: { fields: { hash_key: { stringValue: 'x' } } } }, '10.0.0.4'),
            lbEndpoint('10.0.0.5', 80),
          ]),
        ],
      }),
    );
    const keys = update.priorities[0]![0]!.endpoints.map((e) => e.hashKey);
    assert.deepStrictEqual(keys, ['pod-0', undefined, undefined, undefined, undefined]);
    assert.ok(!('hashKey' in update.priorities[0]![0]!.endpoints[1]!));
  });

  it('requires the endpoint, its address and a socket_address', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, `${EP}.endpoint: field not present`],
      [{ endpointName: 'named' }, `${EP}.endpoint: field not present`],
      [{ endpoint: {} }, `${EP}.endpoint.address: field not present`],
      [
        { endpoint: { address: { pipe: { path: '/tmp/s' } } } },
        `${EP}.endpoint.address.socket_address: field not present`,
      ],
    ];
    for (const [endpoint, error] of cases) {
      const json = assignment({ endpoints: [locality('z', [endpoint])] });
      assert.deepStrictEqual(assignmentErrors(json), [error]);
    }
  });

  it('requires an IP address', () => {
    assert.deepStrictEqual(assignmentErrors(withSocket({ address: '', portValue: 80 })), [
      `${SOCKET}.address: must be non-empty`,
    ]);
    assert.deepStrictEqual(assignmentErrors(withSocket({ address: 'backend', portValue: 80 })), [
      `${SOCKET}.address: must be an IP address`,
    ]);
  });

  it('requires port_value in [0, 65535] and rejects named_port', () => {
    assert.deepStrictEqual(
      assignmentErrors(withSocket({ address: '10.0.0.1', namedPort: 'http' })),
      [`${SOCKET}.named_port: field not supported`],
    );
    assert.deepStrictEqual(
      assignmentErrors(withSocket({ address: '10.0.0.1', portValue: 65536 })),
      [`${SOCKET}.port_value: must be in range [0, 65535]`],
    );
  });

  // C-core and grpc-go keep it: one endpoint nothing can reach must not NACK the others (issue 20).
  it('keeps an endpoint on port 0, or with no port (proto3 reads it as 0)', () => {
    for (const socket of [{ address: '10.0.0.1', portValue: 0 }, { address: '10.0.0.1' }]) {
      const endpoints = [
        lbEndpoint('10.0.0.2', 80),
        { endpoint: { address: { socketAddress: socket } } },
      ];
      const update = validAssignment(assignment({ endpoints: [locality('z1', endpoints)] }));
      assert.deepStrictEqual(
        update.priorities[0]![0]!.endpoints.map((e) => `${e.address}:${e.port}`),
        ['10.0.0.2:80', '10.0.0.1:0'],
      );
    }
  });

  it('allows one IP on two ports but rejects a duplicate address anywhere', () => {
    const twoPorts = [lbEndpoint('10.0.0.1', 80), lbEndpoint('10.0.0.1', 81)];
    validAssignment(assignment({ endpoints: [locality('z', twoPorts)] }));

    const acrossLocalities = assignment({
      endpoints: [
        locality('a', [lbEndpoint('10.0.0.1', 80)]),
        locality('b', [lbEndpoint('10.0.0.1', 80)], { priority: 1 }),
      ],
    });
    assert.deepStrictEqual(assignmentErrors(acrossLocalities), [
      'endpoints[1].lb_endpoints[0].endpoint.address: duplicate address 10.0.0.1:80',
    ]);
  });

  it('counts additional addresses and canonical IPv6 forms as duplicates', () => {
    const withExtra = {
      endpoint: {
        address: { socketAddress: { address: '10.0.0.2', portValue: 80 } },
        additionalAddresses: [
          { address: { socketAddress: { address: '10.0.0.1', portValue: 80 } } },
        ],
      },
    };
    const json = assignment({
      endpoints: [locality('z', [lbEndpoint('10.0.0.1', 80), withExtra])],
    });
    assert.deepStrictEqual(assignmentErrors(json), [
      'endpoints[0].lb_endpoints[1].endpoint.additional_addresses[0].address: ' +
        'duplicate address 10.0.0.1:80',
    ]);
    const v6 = assignment({
      endpoints: [locality('z', [lbEndpoint('2001:db8::1', 80), lbEndpoint('2001:DB8:0::1', 80)])],
    });
    assert.deepStrictEqual(assignmentErrors(v6), [
      'endpoints[0].lb_endpoints[1].endpoint.address: duplicate address [2001:db8::1]:80',
    ]);
  });
});

describe('ClusterLoadAssignment: drop_overloads', () => {
  const withDrops = (...drops: unknown[]) => assignment({ policy: { dropOverloads: drops } });

  it('normalises every denominator to requests per million, capped at 1,000,000', () => {
    const update = validAssignment(
      withDrops(
        drop('hundred', 5, 'HUNDRED'),
        drop('ten-thousand', 5, 'TEN_THOUSAND'),
        drop('million', 5, 'MILLION'),
        drop('over', 200, 'HUNDRED'),
        drop('huge', UINT32_MAX, 'HUNDRED'),
      ),
    );
    assert.deepStrictEqual(update.dropOverloads, [
      { category: 'hundred', requestsPerMillion: 50000 },
      { category: 'ten-thousand', requestsPerMillion: 500 },
      { category: 'million', requestsPerMillion: 5 },
      { category: 'over', requestsPerMillion: 1000000 },
      { category: 'huge', requestsPerMillion: 1000000 },
    ]);
  });

  it('rejects an unknown denominator', () => {
    assert.deepStrictEqual(assignmentErrors(withDrops(drop('lb', 1, 7))), [
      'policy.drop_overloads[0].drop_percentage.denominator: unsupported value 7',
    ]);
  });

  it('requires a category and a drop_percentage', () => {
    assert.deepStrictEqual(assignmentErrors(withDrops(drop('', 1, 'HUNDRED'), { category: 'x' })), [
      'policy.drop_overloads[0].category: must be non-empty',
      'policy.drop_overloads[1].drop_percentage: field not present',
    ]);
  });
});

describe('ClusterLoadAssignment: decode contract', () => {
  it('collects every error of a resource in one pass', () => {
    const json = assignment({
      endpoints: [
        locality('a', [lbEndpoint('10.0.0.1', 65536)]),
        locality('b', [lbEndpoint('host', 80)], { priority: 2 }),
      ],
      policy: { dropOverloads: [drop('', 1, 'HUNDRED')] },
    });
    assert.deepStrictEqual(assignmentErrors(json), [
      'endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value: ' +
        'must be in range [0, 65535]',
      'endpoints[1].lb_endpoints[0].endpoint.address.socket_address.address: ' +
        'must be an IP address',
      'endpoints: missing priority 1',
      'policy.drop_overloads[0].category: must be non-empty',
    ]);
  });

  it('reports bytes that do not parse without a name', () => {
    const result = endpointResourceType.decode(Uint8Array.of(0x12, 0x05), { server: SERVER });
    assert.ok('errors' in result);
    assert.equal(result.name, undefined);
    assert.match(result.errors[0]!.message, /^can't parse ClusterLoadAssignment: /);
  });

  it('freezes the update and everything in it', () => {
    const update = validAssignment(assignment({ policy: { dropOverloads: [drop('x', 1, 0)] } }));
    const localityEndpoints = update.priorities[0]![0]!;
    const frozen = [
      update,
      update.priorities,
      update.priorities[0],
      localityEndpoints,
      localityEndpoints.locality,
      localityEndpoints.endpoints,
      localityEndpoints.endpoints[0],
      update.dropOverloads,
      update.dropOverloads[0],
    ];
    for (const value of frozen) assert.ok(Object.isFrozen(value));
  });

  it('describes itself as the EDS type', () => {
    assert.equal(
      endpointResourceType.typeUrl,
      'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
    );
    assert.equal(endpointResourceType.typeName, 'ClusterLoadAssignment');
    assert.equal(endpointResourceType.allResourcesRequiredInSotW, false);
  });

  it('peekName agrees with decode for valid and invalid fixtures', () => {
    const fixtures = [
      assignment(),
      assignment({ clusterName: 'xdstp://a/envoy.config.endpoint.v3.ClusterLoadAssignment/é' }),
      assignment({ endpoints: [locality('z', [lbEndpoint('10.0.0.1', 0)])] }),
    ];
    for (const json of fixtures) {
      const bytes = encodeAssignment(json);
      const decoded = endpointResourceType.decode(bytes, { server: SERVER });
      assert.equal(endpointResourceType.peekName!(bytes), decoded.name);
    }
  });
});
