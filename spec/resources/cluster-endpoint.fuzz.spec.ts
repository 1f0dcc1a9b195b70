// Robustness of the Cluster and ClusterLoadAssignment decoders against hostile bytes.
//   1. Generate random bytes, and mutations (bit flips, inserted and deleted bytes) of valid
//      fixture encodings, which reach much deeper into the validators than noise does.
//   2. Feed each to decode(): it must return either { name, resource } or { errors } with at
//      least one error, and never throw.
// Runs are bounded (fixed seed, ~300 per property) so the spec stays well under 3 s.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { clusterResourceType } from '../../lib/resources/cluster';
import { endpointResourceType } from '../../lib/resources/endpoint';
import type { DecodeResult, ResourceType } from '../../lib/resources/resource-type';
import {
  SERVER,
  URLS,
  aggregateCluster,
  caContext,
  edsCluster,
  encodeCluster,
  lbPolicyList,
  logicalDnsCluster,
  tlsSocket,
} from './fixtures/cluster-fixtures';
import {
  assignment,
  drop,
  encodeAssignment,
  lbEndpoint,
  locality,
} from './fixtures/endpoint-fixtures';

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 300);
const SEED = Number(process.env['FUZZ_SEED'] ?? 20240611);

const CLUSTERS = [
  edsCluster({
    lrsServer: { self: {} },
    circuitBreakers: { thresholds: [{ maxRequests: { value: 10 } }] },
    outlierDetection: { interval: { seconds: 1 }, enforcingFailurePercentage: { value: 10 } },
    transportSocket: tlsSocket(caContext({ matchSubjectAltNames: [{ exact: 'a' }] })),
  }),
  edsCluster({
    loadBalancingPolicy: lbPolicyList(
      { '@type': URLS.xdsTypedStruct, typeUrl: 'x/y' },
      {
        '@type': URLS.wrrLocality,
        endpointPickingPolicy: lbPolicyList({ '@type': URLS.ringHash }),
      },
    ),
  }),
  logicalDnsCluster({ lbPolicy: 'RING_HASH', ringHashLbConfig: { minimumRingSize: { value: 8 } } }),
  aggregateCluster(['b', 'c']),
].map(encodeCluster);

const ASSIGNMENTS = [
  assignment(),
  assignment({
    endpoints: [
      locality('a', [lbEndpoint('10.0.0.1', 80, { healthStatus: 'HEALTHY' })]),
      locality('b', [lbEndpoint('2001:db8::1', 443, { loadBalancingWeight: { value: 3 } })], {
        priority: 1,
      }),
    ],
    policy: { dropOverloads: [drop('lb', 5, 'HUNDRED')] },
  }),
].map(encodeAssignment);

type Mutation =
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'insert'; at: number; byte: number }
  | { kind: 'delete'; at: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant('flip' as const),
    at: fc.nat(),
    bit: fc.integer({ min: 0, max: 7 }),
  }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    byte: fc.integer({ min: 0, max: 255 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
);

function mutate(original: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  const bytes = Array.from(original);
  for (const m of mutations) {
    const at = bytes.length === 0 ? 0 : m.at % bytes.length;
    if (m.kind === 'flip' && bytes.length > 0) bytes[at] = bytes[at]! ^ (1 << m.bit);
    else if (m.kind === 'insert') bytes.splice(at, 0, m.byte);
    else if (m.kind === 'delete') bytes.splice(at, 1);
  }
  return Uint8Array.from(bytes);
}

/** Mutated copies of one of `fixtures`. */
function mutated(fixtures: readonly Uint8Array[]): fc.Arbitrary<Uint8Array> {
  return fc
    .tuple(fc.constantFrom(...fixtures), fc.array(mutation, { minLength: 1, maxLength: 4 }))
    .map(([bytes, mutations]) => mutate(bytes, mutations));
}

/** decode() must not throw and must return exactly one well-formed outcome. */
function checkOutcome<T>(type: ResourceType<T>, bytes: Uint8Array): void {
  let result: DecodeResult<T>;
  try {
    result = type.decode(bytes, { server: SERVER });
  } catch (e) {
    assert.fail(`${type.typeName} decode threw: ${String(e)}`);
  }
  if ('resource' in result) {
    assert.equal(typeof result.name, 'string');
    assert.ok(Object.isFrozen(result.resource));
    assert.ok(!('errors' in result));
  } else {
    assert.ok(result.name === undefined || typeof result.name === 'string');
    assert.ok(result.errors.length > 0);
    for (const e of result.errors) {
      assert.equal(typeof e.path, 'string');
      assert.equal(typeof e.message, 'string');
    }
  }
}

const cases: [string, ResourceType<unknown>, readonly Uint8Array[]][] = [
  ['Cluster', clusterResourceType, CLUSTERS],
  ['ClusterLoadAssignment', endpointResourceType, ASSIGNMENTS],
];

for (const [name, type, fixtures] of cases) {
  describe(`${name} decode under fuzzing`, () => {
    it('never throws on random bytes', () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 256 }), (bytes) => checkOutcome(type, bytes)),
        { numRuns: RUNS, seed: SEED },
      );
    });

    it('never throws on mutated valid encodings', () => {
      fc.assert(
        fc.property(mutated(fixtures), (bytes) => checkOutcome(type, bytes)),
        { numRuns: RUNS, seed: SEED },
      );
    });

    // On malformed bytes peekName is only a hint (protobufjs reads known fields whatever
    // their wire type); the client checks it against decode. It must never throw.
    it('peekName never throws and answers a string or undefined', () => {
      fc.assert(
        fc.property(mutated(fixtures), (bytes) => {
          const peeked = type.peekName!(bytes);
          assert.ok(peeked === undefined || typeof peeked === 'string');
        }),
        { numRuns: RUNS, seed: SEED },
      );
    });
  });
}
