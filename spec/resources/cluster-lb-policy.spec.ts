// Cluster LB policy: the legacy lb_policy enum with its ring_hash / least_request configs, and
// load_balancing_policy (gRFC A52), which wins whenever it is present.
//   1. Build an EDS cluster fixture with the policy fields under test.
//   2. Decode it, and compare `lbPolicy` or the exact errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LbPolicyRegistry } from '../../lib/resources/resource-type';
import {
  URLS,
  aggregateCluster,
  clusterErrors,
  edsCluster,
  lbPolicyList,
  nestedWrrLocality,
  rawAny,
  validCluster,
} from './fixtures/cluster-fixtures';

const lbPolicyOf = (fields: Record<string, unknown>) => validCluster(edsCluster(fields)).lbPolicy;
const RR = { '@type': URLS.roundRobin };
const LBP = 'load_balancing_policy.policies';

describe('Cluster lb_policy (legacy enum)', () => {
  it('maps ROUND_ROBIN to round robin under weighted localities', () => {
    assert.deepStrictEqual(lbPolicyOf({ lbPolicy: 'ROUND_ROBIN' }), {
      name: 'wrr_locality',
      child: { name: 'round_robin' },
    });
  });

  it('maps RING_HASH with the default ring sizes', () => {
    assert.deepStrictEqual(lbPolicyOf({ lbPolicy: 'RING_HASH' }), {
      name: 'ring_hash',
      minRingSize: 1024,
      maxRingSize: 8388608,
    });
  });

  it('reads ring_hash_lb_config sizes', () => {
    const ringHashLbConfig = { minimumRingSize: { value: 10 }, maximumRingSize: { value: 20 } };
    assert.deepStrictEqual(lbPolicyOf({ lbPolicy: 'RING_HASH', ringHashLbConfig }), {
      name: 'ring_hash',
      minRingSize: 10,
      maxRingSize: 20,
    });
  });

  it('rejects a hash function other than XX_HASH', () => {
    const json = edsCluster({
      lbPolicy: 'RING_HASH',
      ringHashLbConfig: { hashFunction: 'MURMUR_HASH_2' },
    });
    assert.deepStrictEqual(clusterErrors(json), [
      'ring_hash_lb_config.hash_function: unsupported value MURMUR_HASH_2',
    ]);
  });

  it('rejects ring sizes outside [1, 8388608] and a minimum above the maximum', () => {
    const ring = (min: number, max: number) =>
      edsCluster({
        lbPolicy: 'RING_HASH',
        ringHashLbConfig: { minimumRingSize: { value: min }, maximumRingSize: { value: max } },
      });
    assert.deepStrictEqual(clusterErrors(ring(0, 8388609)), [
      'ring_hash_lb_config.maximum_ring_size: must be in range [1, 8388608]',
      'ring_hash_lb_config.minimum_ring_size: must be in range [1, 8388608]',
    ]);
    assert.deepStrictEqual(clusterErrors(ring(30, 20)), [
      'ring_hash_lb_config.minimum_ring_size: must not exceed maximum_ring_size',
    ]);
  });

  it('maps LEAST_REQUEST to least request under weighted localities, choice_count 2 by default, clamping above 10 (A48)', () => {
    assert.deepStrictEqual(lbPolicyOf({ lbPolicy: 'LEAST_REQUEST' }), {
      name: 'wrr_locality',
      child: { name: 'least_request', choiceCount: 2 },
    });
    const leastRequestLbConfig = { choiceCount: { value: 25 } };
    assert.deepStrictEqual(lbPolicyOf({ lbPolicy: 'LEAST_REQUEST', leastRequestLbConfig }), {
      name: 'wrr_locality',
      child: { name: 'least_request', choiceCount: 10 },
    });
  });

  it('rejects choice_count below 2', () => {
    const json = edsCluster({
      lbPolicy: 'LEAST_REQUEST',
      leastRequestLbConfig: { choiceCount: { value: 1 } },
    });
    assert.deepStrictEqual(clusterErrors(json), [
      'least_request_lb_config.choice_count: must be greater than 1',
    ]);
  });

  for (const policy of ['RANDOM', 'MAGLEV', 'CLUSTER_PROVIDED', 'LOAD_BALANCING_POLICY_CONFIG']) {
    it(`rejects ${policy}`, () => {
      assert.deepStrictEqual(clusterErrors(edsCluster({ lbPolicy: policy })), [
        `lb_policy: unsupported value ${policy}`,
      ]);
    });
  }
});

describe('Cluster load_balancing_policy (A52)', () => {
  it('converts each supported policy type', () => {
    const cases: [Record<string, unknown>, unknown][] = [
      [RR, { name: 'round_robin' }],
      [{ '@type': URLS.ringHash }, { name: 'ring_hash', minRingSize: 1024, maxRingSize: 8388608 }],
      [
        { '@type': URLS.ringHash, hashFunction: 'XX_HASH', minimumRingSize: { value: 5 } },
        { name: 'ring_hash', minRingSize: 5, maxRingSize: 8388608 },
      ],
      [{ '@type': URLS.leastRequest }, { name: 'least_request', choiceCount: 2 }],
      [
        { '@type': URLS.pickFirst, shuffleAddressList: true },
        { name: 'pick_first', shuffleAddressList: true },
      ],
      [
        { '@type': URLS.wrrLocality, endpointPickingPolicy: lbPolicyList(RR) },
        { name: 'wrr_locality', child: { name: 'round_robin' } },
      ],
    ];
    for (const [typedConfig, expected] of cases) {
      assert.deepStrictEqual(
        lbPolicyOf({ loadBalancingPolicy: lbPolicyList(typedConfig) }),
        expected,
      );
    }
  });

  it('without an LB policy registry, skips custom TypedStruct policies and unknown types, taking the first supported', () => {
    const list = lbPolicyList(
      { '@type': URLS.xdsTypedStruct, typeUrl: 'type.googleapis.com/my.Policy', value: {} },
      { '@type': URLS.udpaTypedStruct, typeUrl: 'type.googleapis.com/my.Policy' },
      rawAny('type.googleapis.com/vendor.lb.v1.Magic'),
      { '@type': URLS.pickFirst },
      { '@type': URLS.ringHash, minimumRingSize: { value: 0 } },
    );
    assert.deepStrictEqual(lbPolicyOf({ loadBalancingPolicy: list }), {
      name: 'pick_first',
      shuffleAddressList: false,
    });
  });

  it('rejects a list with no supported policy, or an empty one', () => {
    const unsupported = lbPolicyList(rawAny('type.googleapis.com/vendor.lb.v1.Magic'));
    assert.deepStrictEqual(clusterErrors(edsCluster({ loadBalancingPolicy: unsupported })), [
      `${LBP}: no supported load balancing policy`,
    ]);
    assert.deepStrictEqual(clusterErrors(edsCluster({ loadBalancingPolicy: {} })), [
      `${LBP}: no supported load balancing policy`,
    ]);
  });

  it('ignores the legacy fields when present, even unsupported ones', () => {
    const json = edsCluster({ lbPolicy: 'MAGLEV', loadBalancingPolicy: lbPolicyList(RR) });
    assert.deepStrictEqual(validCluster(json).lbPolicy, { name: 'round_robin' });
  });

  it('fails on an invalid config in the first supported policy, not trying later ones', () => {
    const list = lbPolicyList(
      { '@type': URLS.ringHash, minimumRingSize: { value: 9 }, maximumRingSize: { value: 3 } },
      RR,
    );
    assert.deepStrictEqual(clusterErrors(edsCluster({ loadBalancingPolicy: list })), [
      `${LBP}[0].typed_extension_config.typed_config.minimum_ring_size: ` +
        'must not exceed maximum_ring_size',
    ]);
  });

  it('validates the new RingHash: DEFAULT_HASH and XX_HASH only, sizes in range', () => {
    const list = lbPolicyList({
      '@type': URLS.ringHash,
      hashFunction: 'MURMUR_HASH_2',
      maximumRingSize: { value: 8388609 },
    });
    const path = `${LBP}[0].typed_extension_config.typed_config`;
    assert.deepStrictEqual(clusterErrors(edsCluster({ loadBalancingPolicy: list })), [
      `${path}.hash_function: unsupported value MURMUR_HASH_2`,
      `${path}.maximum_ring_size: must be in range [1, 8388608]`,
    ]);
  });

  it('validates LeastRequest choice_count', () => {
    const list = lbPolicyList({ '@type': URLS.leastRequest, choiceCount: { value: 0 } });
    assert.deepStrictEqual(clusterErrors(edsCluster({ loadBalancingPolicy: list })), [
      `${LBP}[0].typed_extension_config.typed_config.choice_count: must be greater than 1`,
    ]);
  });

  it('requires typed_extension_config, its typed_config, and bytes that parse', () => {
    const missing = { policies: [{}] };
    assert.deepStrictEqual(clusterErrors(edsCluster({ loadBalancingPolicy: missing })), [
      `${LBP}[0].typed_extension_config: field not present`,
    ]);
    const noConfig = { policies: [{ typedExtensionConfig: { name: 'x' } }] };
    assert.deepStrictEqual(clusterErrors(edsCluster({ loadBalancingPolicy: noConfig })), [
      `${LBP}[0].typed_extension_config.typed_config: field not present`,
    ]);
    const garbage = lbPolicyList(rawAny(URLS.pickFirst, Uint8Array.of(0x0f)));
    assert.deepStrictEqual(clusterErrors(edsCluster({ loadBalancingPolicy: garbage })), [
      `${LBP}[0].typed_extension_config.typed_config: can't parse PickFirst`,
    ]);
  });

  it('requires endpoint_picking_policy in WrrLocality', () => {
    const list = lbPolicyList({ '@type': URLS.wrrLocality });
    assert.deepStrictEqual(clusterErrors(edsCluster({ loadBalancingPolicy: list })), [
      `${LBP}[0].typed_extension_config.typed_config.endpoint_picking_policy: field not present`,
    ]);
  });

  it('accepts 15 nested WrrLocality levels and rejects 16 (max depth 16)', () => {
    let expected: unknown = { name: 'round_robin' };
    for (let i = 0; i < 15; i++) expected = { name: 'wrr_locality', child: expected };
    assert.deepStrictEqual(lbPolicyOf({ loadBalancingPolicy: nestedWrrLocality(15) }), expected);

    const errors = clusterErrors(edsCluster({ loadBalancingPolicy: nestedWrrLocality(16) }));
    const step = '.policies[0].typed_extension_config.typed_config.endpoint_picking_policy';
    assert.deepStrictEqual(errors, [
      `load_balancing_policy${step.repeat(16)}: exceeds maximum nesting depth 16`,
    ]);
  });
});

describe('an aggregate cluster’s own policy (A75)', () => {
  it('is ignored so envoys cluster provided aggregate is accepted', () => {
    // As Envoy's docs write an aggregate: lb_policy CLUSTER_PROVIDED, which gRPC has no policy for.
    const written = aggregateCluster(['B', 'C'], { lbPolicy: 'CLUSTER_PROVIDED' });
    const update = validCluster(written);
    assert.equal(update.type, 'AGGREGATE');
    assert.deepStrictEqual(update.prioritizedClusterNames, ['B', 'C']);
    // An EDS cluster with the same policy is still NACKed: there it would be used.
    assert.deepStrictEqual(clusterErrors(edsCluster({ lbPolicy: 'CLUSTER_PROVIDED' })), [
      'lb_policy: unsupported value CLUSTER_PROVIDED',
    ]);
  });
});

/**
 * A registry as a consumer passes one: `my.Lb` takes any config, `my.Strict` needs a numeric
 * `index`, and `weighted_round_robin` exists when `wrr` is true.
 */
function registry(wrr = true): LbPolicyRegistry & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    has(name) {
      asked.push(name);
      return name === 'my.Lb' || name === 'my.Strict' || (wrr && name === 'weighted_round_robin');
    },
    configError(name, config) {
      if (name === 'my.Strict' && typeof config['index'] !== 'number') {
        return 'index must be a number';
      }
      return undefined;
    },
  };
}

/** A TypedStruct naming `typeUrl`, with `fields` as a google.protobuf.Struct's fields. */
function typedStruct(
  typeUrl: string,
  fields?: Record<string, unknown>,
  udpa = false,
): Record<string, unknown> {
  return {
    '@type': udpa ? URLS.udpaTypedStruct : URLS.xdsTypedStruct,
    typeUrl,
    ...(fields === undefined ? {} : { value: { fields } }),
  };
}

describe('Cluster load_balancing_policy: custom policies (A52)', () => {
  const TYPED = `${LBP}[0].typed_extension_config.typed_config`;

  it('uses a registered policy named by the TypedStruct type URL, its Struct as the JSON config', () => {
    const fields = {
      index: { numberValue: 1 },
      name: { stringValue: 'x' },
      on: { boolValue: true },
      none: { nullValue: 'NULL_VALUE' },
      list: { listValue: { values: [{ numberValue: 2 }, { stringValue: 'y' }] } },
      nested: { structValue: { fields: { depth: { numberValue: 3 } } } },
    };
    for (const udpa of [false, true]) {
      const list = lbPolicyList(typedStruct('type.googleapis.com/my.Lb', fields, udpa), RR);
      const policy = validCluster(edsCluster({ loadBalancingPolicy: list }), registry());
      assert.deepStrictEqual(policy.lbPolicy, {
        name: 'custom',
        policyName: 'my.Lb',
        config: {
          index: 1,
          name: 'x',
          on: true,
          none: null,
          list: [2, 'y'],
          nested: { depth: 3 },
        },
      });
      assert.ok(policy.lbPolicy.name === 'custom' && Object.isFrozen(policy.lbPolicy.config));
    }
  });

  it('takes the name after the last slash of any type URL, and an absent Struct as {}', () => {
    const list = lbPolicyList(typedStruct('example.com/policies/my.Lb'));
    assert.deepStrictEqual(
      validCluster(edsCluster({ loadBalancingPolicy: list }), registry()).lbPolicy,
      { name: 'custom', policyName: 'my.Lb', config: {} },
    );
  });

  it('skips a policy the registry does not have and uses the next entry', () => {
    const reg = registry();
    const list = lbPolicyList(typedStruct('type.googleapis.com/other.Lb', {}), RR);
    assert.deepStrictEqual(validCluster(edsCluster({ loadBalancingPolicy: list }), reg).lbPolicy, {
      name: 'round_robin',
    });
    assert.deepStrictEqual(reg.asked, ['other.Lb']);
  });

  it('NACKs a config the registered policy rejects, without trying later entries', () => {
    const list = lbPolicyList(
      typedStruct('type.googleapis.com/my.Strict', { index: { stringValue: 'one' } }),
      RR,
    );
    assert.deepStrictEqual(clusterErrors(edsCluster({ loadBalancingPolicy: list }), registry()), [
      `${TYPED}.value: invalid config for LB policy my.Strict: index must be a number`,
    ]);
  });

  it('NACKs a TypedStruct whose bytes do not parse (skipped unread without a registry)', () => {
    const list = lbPolicyList(rawAny(URLS.xdsTypedStruct, Uint8Array.of(0x0f)), RR);
    assert.deepStrictEqual(clusterErrors(edsCluster({ loadBalancingPolicy: list }), registry()), [
      `${TYPED}: can't parse TypedStruct`,
    ]);
    assert.deepStrictEqual(validCluster(edsCluster({ loadBalancingPolicy: list })).lbPolicy, {
      name: 'round_robin',
    });
  });

  it('uses a custom policy as the endpoint policy of WrrLocality', () => {
    const list = lbPolicyList({
      '@type': URLS.wrrLocality,
      endpointPickingPolicy: lbPolicyList(typedStruct('type.googleapis.com/my.Lb', {}), RR),
    });
    assert.deepStrictEqual(
      validCluster(edsCluster({ loadBalancingPolicy: list }), registry()).lbPolicy,
      { name: 'wrr_locality', child: { name: 'custom', policyName: 'my.Lb', config: {} } },
    );
  });
});

describe('Cluster load_balancing_policy: ClientSideWeightedRoundRobin (A58)', () => {
  const TYPED = `${LBP}[0].typed_extension_config.typed_config`;

  it('fills in A58’s defaults', () => {
    const list = lbPolicyList({ '@type': URLS.clientSideWrr });
    assert.deepStrictEqual(validCluster(edsCluster({ loadBalancingPolicy: list })).lbPolicy, {
      name: 'client_side_weighted_round_robin',
      enableOobLoadReport: false,
      oobReportingPeriodMs: 10000,
      blackoutPeriodMs: 10000,
      weightExpirationPeriodMs: 180000,
      weightUpdatePeriodMs: 1000,
      errorUtilizationPenalty: 1,
    });
  });

  it('reads every field', () => {
    const list = lbPolicyList({
      '@type': URLS.clientSideWrr,
      enableOobLoadReport: { value: true },
      oobReportingPeriod: { seconds: 2 },
      blackoutPeriod: { seconds: 0 },
      weightExpirationPeriod: { seconds: 60 },
      weightUpdatePeriod: { nanos: 50_000_000 },
      errorUtilizationPenalty: { value: 0.5 },
    });
    assert.deepStrictEqual(
      validCluster(edsCluster({ loadBalancingPolicy: list }), registry()).lbPolicy,
      {
        name: 'client_side_weighted_round_robin',
        enableOobLoadReport: true,
        oobReportingPeriodMs: 2000,
        blackoutPeriodMs: 0,
        weightExpirationPeriodMs: 60000,
        weightUpdatePeriodMs: 50,
        errorUtilizationPenalty: 0.5,
      },
    );
  });

  it('is skipped for the next entry where the registry has no weighted_round_robin', () => {
    const list = lbPolicyList({ '@type': URLS.clientSideWrr }, RR);
    assert.deepStrictEqual(
      validCluster(edsCluster({ loadBalancingPolicy: list }), registry(false)).lbPolicy,
      { name: 'round_robin' },
    );
  });

  it('NACKs negative durations and a negative error_utilization_penalty', () => {
    const list = lbPolicyList({
      '@type': URLS.clientSideWrr,
      blackoutPeriod: { seconds: -1 },
      weightUpdatePeriod: { nanos: -5 },
      errorUtilizationPenalty: { value: -1 },
    });
    assert.deepStrictEqual(clusterErrors(edsCluster({ loadBalancingPolicy: list })), [
      `${TYPED}.blackout_period.seconds: must be in range [0, 315576000000]`,
      `${TYPED}.weight_update_period.nanos: must be in range [0, 999999999]`,
      `${TYPED}.error_utilization_penalty: must be non-negative`,
    ]);
  });
});
