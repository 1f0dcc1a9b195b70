// The EDS fast path (lib/resources/endpoint/read-assignment.ts and endpoint-fast-path.ts) reads
// most endpoints straight from their bytes; it must accept, reject and report exactly what the
// generated decoder and the scoped validator do. Random assignments — every field the library
// reads, fields given twice, weights that overflow, duplicate addresses, hostile bytes — are
// decoded both ways and compared whole: the update, or the error list with its field paths.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import fc from 'fast-check';
import { messageCodec } from '../../lib/codec';
import type { Messages } from '../../lib/generated/protos';
import { decodeAndValidate } from '../../lib/resources/common';
import { endpointResourceType } from '../../lib/resources/endpoint';
import type { EndpointUpdate } from '../../lib/resources/endpoint';
import { isIPv4 } from '../../lib/resources/endpoint/ipv4';
import { validateEndpoints } from '../../lib/resources/endpoint/validate';
import { SERVER, type Json } from './fixtures/cluster-fixtures';
import { encodeAssignment } from './fixtures/endpoint-fixtures';
import { delimited, maybeMutated, mostly } from './fixtures/fast-path-fuzz';

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 600);
const SEED = Number(process.env['FUZZ_SEED'] ?? 20261127);

const assignmentCodec = messageCodec('envoy.config.endpoint.v3.ClusterLoadAssignment');
const localityCodec = messageCodec('envoy.config.endpoint.v3.LocalityLbEndpoints');
const lbEndpointCodec = messageCodec('envoy.config.endpoint.v3.LbEndpoint');

/** The assignment in `bytes` as the generated decoder and the scoped validator alone see it. */
function decodeGenerically(bytes: Uint8Array) {
  return decodeAndValidate(
    'ClusterLoadAssignment',
    bytes,
    assignmentCodec.decode,
    (assignment) => assignment.clusterName,
    (assignment, errors) => validateEndpoints(assignment, errors) as EndpointUpdate,
  );
}

const address = mostly(
  fc
    .tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
    .map(([a, b]) => `10.${a}.${b}.1`),
  fc.constantFrom(
    ...['10.0.0.1', '10.0.0.2', '0.0.0.0', '255.255.255.255', '01.2.3.4', '1.2.3', '1.2.3.4.5'],
    ...['256.1.1.1', '1.2.3.4 ', '::1', '0:0::1', '2001:db8::1', 'fe80::1%eth0', '', 'localhost'],
  ),
  4,
);

const socketAddress = fc
  .record({
    address,
    port: mostly(
      fc.record({ portValue: fc.constantFrom(80, 443) }),
      fc.oneof(
        fc.record({ portValue: fc.constantFrom(0, 1, 65535, 65536, 70000) }),
        fc.constant<Json>({ namedPort: 'http' }),
        fc.constant<Json>({}),
      ),
    ),
    extra: mostly(
      fc.constant<Json>({}),
      fc.record(
        {
          protocol: fc.constantFrom('TCP', 'UDP'),
          resolverName: fc.constant('dns'),
          ipv4Compat: fc.boolean(),
        },
        { requiredKeys: [] },
      ),
      3,
    ),
  })
  .map(({ address: text, port, extra }) => ({ address: text, ...port, ...extra }));

const metadata = mostly(
  fc.constant<Json>({ filterMetadata: { istio: { workload: 'w' } } }),
  fc.constantFrom<Json>(
    { filterMetadata: { 'envoy.lb': { hash_key: 'key-1' } } },
    { filterMetadata: { 'envoy.lb': { hash_key: 7 } } },
    {
      typedFilterMetadata: {
        'envoy.http11_proxy_transport_socket.proxy_address': {
          '@type': 'type.googleapis.com/envoy.config.core.v3.Address',
          socketAddress: { address: '10.9.9.9', portValue: 3128 },
        },
      },
    },
  ),
  3,
);

const endpointMessage = mostly<Json>(
  fc.record({
    address: mostly<Json>(
      fc.record({ socketAddress }),
      fc.constantFrom<Json>({ pipe: { path: '/tmp/s' } }, {}),
      20,
    ),
    hostname: fc.constantFrom('', 'host-a'),
    additionalAddresses: mostly<Json[]>(
      fc.constant([]),
      fc.array(fc.record({ address: fc.record({ socketAddress }) }), { maxLength: 2 }),
      4,
    ),
  }),
  fc.constant({}),
  20,
);

const lbEndpointJson = fc.record(
  {
    endpoint: endpointMessage,
    // The other member of the endpoint's oneof: sent with it, it takes the endpoint's place.
    endpointName: mostly(fc.constant(undefined), fc.constant('named')),
    healthStatus: mostly(fc.integer({ min: 0, max: 5 }), fc.constantFrom(6, 7)),
    metadata,
    loadBalancingWeight: mostly<Json>(
      fc.record({ value: fc.constantFrom(1, 5) }),
      fc.constantFrom<Json>({ value: 0 }, { value: 4_294_967_295 }, {}),
    ),
  },
  { requiredKeys: ['endpoint'] },
);

/** An LbEndpoint's bytes: now and then two encodings one after the other (fields given twice). */
const lbEndpointBytes = mostly(
  fc.array(lbEndpointJson, { minLength: 1, maxLength: 1 }),
  fc.array(lbEndpointJson, { minLength: 2, maxLength: 2 }),
  6,
).map((parts) =>
  Buffer.concat(parts.map((json) => lbEndpointCodec.encode(lbEndpointCodec.fromObject(json)))),
);

const localityBytes = fc
  .record({
    head: fc.record(
      {
        locality: fc.record({
          region: fc.constant('r'),
          zone: fc.constantFrom('a', 'b'),
          subZone: fc.constant(''),
        }),
        metadata,
        loadBalancingWeight: fc.record({
          value: mostly(fc.constantFrom(1, 3), fc.constantFrom(0, 4_294_967_295), 6),
        }),
        priority: mostly(fc.constant(0), fc.integer({ min: 1, max: 2 }), 4),
      },
      { requiredKeys: ['locality', 'loadBalancingWeight'] },
    ),
    endpoints: fc.array(lbEndpointBytes, { maxLength: 4 }),
  })
  .map(({ head, endpoints }) =>
    Buffer.concat([
      localityCodec.encode(localityCodec.fromObject(head)),
      ...endpoints.map((bytes) => delimited(2, bytes)),
    ]),
  );

const assignmentBytes = fc
  .record({
    clusterName: mostly(fc.constant('eds-a'), fc.constant(''), 20),
    localities: fc.array(localityBytes, { minLength: 1, maxLength: 2 }),
    policy: fc.option(
      fc.constant<Json>({ dropOverloads: [{ category: 'lb', dropPercentage: { numerator: 5 } }] }),
    ),
  })
  .map(({ clusterName, localities, policy }) =>
    Buffer.concat([
      encodeAssignment({ clusterName, ...(policy ? { policy } : {}) }),
      ...localities.map((bytes) => delimited(2, bytes)),
    ]),
  );

const mutatedAssignment = maybeMutated(assignmentBytes);

describe('endpoint fast path', () => {
  it('reads an IPv4 literal exactly as net.isIP does', () => {
    const part = fc.oneof(
      fc.integer({ min: 0, max: 300 }).map(String),
      fc.stringMatching(/^[0-9]{1,4}$/),
      fc.constantFrom('', '00', '01', '255', '256', ' 1', '1a', '-1', '+1'),
    );
    const text = fc.oneof(
      fc.array(part, { minLength: 1, maxLength: 6 }).map((parts) => parts.join('.')),
      fc.stringMatching(/^[0-9.]{0,16}$/),
      fc.constantFrom('::1', '::ffff:1.2.3.4', '1.2.3.4.', '.1.2.3.4', '1..2.3', 'localhost'),
      fc.constantFrom('١.2.3.4', '1.2.3.٤', 'İ.0.0.1'),
    );
    fc.assert(
      fc.property(text, (value) => {
        assert.equal(isIPv4(value), isIP(value) === 4, JSON.stringify(value));
      }),
      { numRuns: RUNS * 3, seed: SEED },
    );
  });

  it('accepts, rejects and reports every assignment as the generated decoder and scoped validator do', () => {
    let valid = 0;
    fc.assert(
      fc.property(mutatedAssignment, (bytes) => {
        const fast = endpointResourceType.decode(bytes, { server: SERVER });
        assert.deepEqual(fast, decodeGenerically(bytes));
        if ('resource' in fast) valid++;
      }),
      { numRuns: RUNS, seed: SEED },
    );
    // Not every run a NACK: the comparison covers accepted updates too.
    assert.ok(valid > RUNS / 4, `only ${valid} of ${RUNS} assignments were valid`);
  });

  it('knows every field protos/ declares in the messages it reads itself', () => {
    // A field added to one of these messages must be read (or deliberately skipped) by the fast
    // path too: until it is, the fast path would skip it where the generated decoder reads it.
    const read: Record<string, number[]> = {
      'envoy.config.endpoint.v3.ClusterLoadAssignment': [1, 2, 4],
      'envoy.config.endpoint.v3.LocalityLbEndpoints': [1, 2, 3, 5, 9],
      'envoy.config.endpoint.v3.LbEndpoint': [1, 2, 3, 4, 5],
      'envoy.config.endpoint.v3.Endpoint': [1, 3, 4],
      'envoy.config.core.v3.Address': [1, 2],
      'envoy.config.core.v3.SocketAddress': [1, 2, 3, 4, 5, 6],
      'google.protobuf.UInt32Value': [1],
    };
    for (const [name, ids] of Object.entries(read)) {
      const declared = messageCodec(name as keyof Messages)
        .type.fieldsArray.map((field) => field.id)
        .sort((a, b) => a - b);
      assert.deepEqual(declared, ids, name);
    }
  });
});
