// The CDS fast path (lib/resources/cluster/cluster-fast-path.ts) reads the common Cluster
// straight from its bytes; it must accept, reject and report exactly what the generated decoder
// and the validator do. Random Clusters — every field the library reads, the values that make
// the fast path give up, fields given twice, hostile bytes — are decoded both ways and compared
// whole: the update (its lazily read metadata included), or the error list with its field paths.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { messageCodec } from '../../lib/codec';
import type { Messages } from '../../lib/generated/protos';
import { clusterResourceType, type ClusterUpdate } from '../../lib/resources/cluster';
import { readCommonCluster } from '../../lib/resources/cluster/cluster-fast-path';
import { validateCluster } from '../../lib/resources/cluster/validate';
import { decodeAndValidate } from '../../lib/resources/common';
import { SERVER, URLS, encodeCluster, tlsSocket, type Json } from './fixtures/cluster-fixtures';
import { delimited, maybeMutated, mostly, sometimesTwice } from './fixtures/fast-path-fuzz';

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 600);
const SEED = Number(process.env['FUZZ_SEED'] ?? 20261127);

const clusterCodec = messageCodec('envoy.config.cluster.v3.Cluster');
const audienceCodec = messageCodec('envoy.extensions.filters.http.gcp_authn.v3.Audience');
const configSourceCodec = messageCodec('envoy.config.core.v3.ConfigSource');
const edsConfigCodec = messageCodec('envoy.config.cluster.v3.Cluster.EdsClusterConfig');
const thresholdsCodec = messageCodec('envoy.config.cluster.v3.CircuitBreakers.Thresholds');

/** `json` encoded as the message `codec` names. */
function encoded(codec: { encode(m: never): Uint8Array; fromObject(o: Json): unknown }) {
  return (json: Json) => codec.encode(codec.fromObject(json) as never);
}
const CONTEXT = { server: SERVER };

/** The Cluster in `bytes` as the generated decoder and the validator alone see it. */
function decodeGenerically(bytes: Uint8Array) {
  return decodeAndValidate(
    'Cluster',
    bytes,
    clusterCodec.decode,
    (cluster) => cluster.name,
    (cluster, errors) => validateCluster(cluster, errors, CONTEXT) as ClusterUpdate,
  );
}

const configSource = mostly<Json>(
  fc.constantFrom<Json>({ ads: {} }, { self: {} }, { ads: {}, resourceApiVersion: 'V3' }),
  fc.constantFrom<Json>(
    { self: { transportApiVersion: 'V3' }, initialFetchTimeout: { seconds: 2 } },
    { path: '/etc/eds.yaml' },
    { apiConfigSource: { apiType: 'GRPC' } },
    { pathConfigSource: { path: '/etc/eds.yaml' } },
    {},
  ),
  6,
);

/** A ConfigSource's bytes: now and then two (one member after another, ads then self...). */
const configSourceBytes = sometimesTwice(configSource.map(encoded(configSourceCodec)));

const serviceName = fc.constantFrom('', 'eds-a', 'outbound|80||reviews.default.svc.cluster.local');

/** An EdsClusterConfig's bytes: now and then with a second service_name after them. */
const edsClusterConfigBytes = fc
  .record({
    serviceName,
    edsConfig: mostly(configSourceBytes, fc.constant(null), 12),
    again: mostly(fc.constant(null), serviceName, 4),
  })
  .map(({ serviceName: name, edsConfig, again }) =>
    Buffer.concat([
      encoded(edsConfigCodec)({ serviceName: name }),
      ...(edsConfig === null ? [] : [delimited(1, edsConfig)]),
      ...(again === null ? [] : [encoded(edsConfigCodec)({ serviceName: again })]),
    ]),
  );

const threshold = fc.record(
  {
    priority: mostly(fc.constant('DEFAULT'), fc.constant('HIGH'), 3),
    maxRequests: mostly<Json>(
      fc.record({ value: fc.integer({ min: 1, max: 5000 }) }),
      fc.constant({}),
    ),
    maxConnections: fc.constant({ value: 1024 }),
    maxPendingRequests: fc.constant({ value: 64 }),
    maxRetries: fc.constant({ value: 3 }),
  },
  { requiredKeys: [] },
);

const circuitBreakersBytes = fc
  .array(sometimesTwice(threshold.map(encoded(thresholdsCodec))), { maxLength: 3 })
  .map((thresholds) => Buffer.concat(thresholds.map((bytes) => delimited(1, bytes))));

const outlierDetection = mostly<Json>(
  fc.record(
    {
      consecutive5xx: fc.constant(5),
      interval: fc.constantFrom<Json>({ seconds: 10 }, { seconds: 1, nanos: 500_000_000 }),
      baseEjectionTime: fc.constant({ seconds: 30 }),
      maxEjectionPercent: fc.record({ value: fc.constantFrom(10, 100) }),
      enforcingSuccessRate: fc.record({ value: fc.constantFrom(0, 100) }),
    },
    { requiredKeys: [] },
  ),
  fc.constantFrom<Json>(
    { maxEjectionPercent: { value: 150 } },
    { interval: { seconds: -1 } },
    { baseEjectionTime: { seconds: 1, nanos: 2_000_000_000 } },
  ),
  4,
);

const metadata = mostly<Json>(
  fc.constantFrom<Json>(
    { filterMetadata: { istio: { services: [{ name: 'reviews', namespace: 'default' }] } } },
    {},
  ),
  fc.constantFrom<Json>(
    {
      typedFilterMetadata: {
        'com.example.audience': {
          type_url: `type.googleapis.com/${audienceCodec.fullName}`,
          value: audienceCodec.encode(audienceCodec.fromObject({ url: 'https://a.example' })),
        },
      },
    },
    {
      typedFilterMetadata: {
        'com.example.audience': {
          type_url: `type.googleapis.com/${audienceCodec.fullName}`,
          value: audienceCodec.encode(audienceCodec.fromObject({ url: '' })),
        },
      },
    },
  ),
  4,
);

const clusterJson = fc.record(
  {
    name: mostly(
      fc.constantFrom('outbound|80||reviews.default.svc.cluster.local', 'cluster-a'),
      fc.constantFrom('', 'xdstp://authority/envoy.config.cluster.v3.Cluster/c'),
      8,
    ),
    type: mostly(fc.constant('EDS'), fc.constantFrom('STATIC', 'LOGICAL_DNS', 'ORIGINAL_DST'), 12),
    connectTimeout: fc.constantFrom<Json>({ seconds: 1 }, { nanos: 250_000_000 }),
    lbPolicy: mostly(fc.constant('ROUND_ROBIN'), fc.constantFrom('LEAST_REQUEST', 'RANDOM'), 8),
    outlierDetection,
    metadata,
    commonLbConfig: mostly<Json>(
      fc.constant({}),
      fc.constant({ overrideHostStatus: { statuses: ['HEALTHY', 'DRAINING'] } }),
      3,
    ),
    lrsReportEndpointMetrics: fc.constantFrom(
      [],
      ['cpu_utilization'],
      ['named_metrics.*', 'mem_utilization'],
    ),
  },
  { requiredKeys: ['name', 'type'] },
);

/** What the fast path never reads itself: present in one Cluster of eleven. */
const unusualField = fc.constantFrom<Json>(
  { transportSocket: tlsSocket(undefined) },
  { ringHashLbConfig: { minimumRingSize: { value: 64 } } },
  {
    loadBalancingPolicy: {
      policies: [{ typedExtensionConfig: { typedConfig: { '@type': URLS.roundRobin } } }],
    },
  },
  { clusterType: { name: 'envoy.clusters.aggregate' } },
  { loadAssignment: { clusterName: 'dns' } },
);

/**
 * A Cluster's bytes: its plain fields encoded, then the messages whose own fields may come twice
 * (eds_cluster_config, circuit_breakers, lrs_server) appended as raw fields.
 */
const clusterMessage = fc
  .record({
    json: clusterJson,
    unusual: mostly(fc.constant<Json>({}), unusualField),
    edsClusterConfig: mostly(edsClusterConfigBytes, fc.constant(null), 12),
    circuitBreakers: fc.option(circuitBreakersBytes),
    lrsServer: mostly(
      fc.constant(null),
      sometimesTwice(
        mostly(fc.constant<Json>({ self: {} }), fc.constantFrom<Json>({ ads: {} }, {}), 3).map(
          encoded(configSourceCodec),
        ),
        2,
      ),
      1,
    ),
  })
  .map(({ json, unusual, edsClusterConfig, circuitBreakers, lrsServer }) =>
    Buffer.concat([
      encodeCluster({ ...json, ...unusual }),
      ...(edsClusterConfig === null ? [] : [delimited(3, edsClusterConfig)]),
      ...(circuitBreakers === null ? [] : [delimited(10, circuitBreakers)]),
      ...(lrsServer === null ? [] : [delimited(42, lrsServer)]),
    ]),
  );

/** Hostile bytes now and then, over Clusters now and then given twice whole. */
const mutatedCluster = maybeMutated(sometimesTwice(clusterMessage));

describe('cluster fast path', () => {
  it('accepts, rejects and reports every Cluster as the generated decoder and validator do', () => {
    let valid = 0;
    let readFast = 0;
    fc.assert(
      fc.property(mutatedCluster, (bytes) => {
        const result = clusterResourceType.decode(bytes, CONTEXT);
        assert.deepEqual(result, decodeGenerically(bytes));
        if ('resource' in result) valid++;
        if (readCommonCluster(bytes, CONTEXT) !== undefined) readFast++;
      }),
      { numRuns: RUNS, seed: SEED },
    );
    // Neither side of the comparison is left untried: accepted and rejected Clusters both, and
    // most accepted ones read by the fast path itself.
    assert.ok(valid > RUNS / 5, `only ${valid} of ${RUNS} Clusters were valid`);
    assert.ok(valid < RUNS, 'every Cluster was valid');
    assert.ok(readFast > valid / 3, `the fast path read ${readFast} of ${valid} valid Clusters`);
  });

  it('reads the Clusters a mesh control plane sends without falling back', () => {
    const bytes = encodeCluster({
      name: 'outbound|9080||reviews.default.svc.cluster.local',
      type: 'EDS',
      edsClusterConfig: {
        edsConfig: { ads: {}, resourceApiVersion: 'V3' },
        serviceName: 'outbound|9080||reviews.default.svc.cluster.local',
      },
      connectTimeout: { seconds: 10 },
      lbPolicy: 'ROUND_ROBIN',
      circuitBreakers: { thresholds: [{ maxRequests: { value: 2048 } }] },
      outlierDetection: { consecutive5xx: 5, interval: { seconds: 10 } },
      metadata: { filterMetadata: { istio: { default_original_port: 9080 } } },
      commonLbConfig: {},
      lrsServer: { self: {} },
    });
    const update = readCommonCluster(bytes, CONTEXT);
    assert.ok(update !== undefined, 'fell back');
    assert.deepEqual({ name: update.name, resource: update }, decodeGenerically(bytes));
    assert.equal(update.maxConcurrentRequests, 2048);
    assert.equal(update.lrsServer, SERVER);
  });

  it('knows every field protos/ declares in the messages it reads itself', () => {
    // A field added to one of these messages must be read (or deliberately skipped, or made to
    // fall back) by the fast path too: until it is, the fast path would skip it where the
    // generated decoder reads it.
    const read: Record<string, number[]> = {
      'envoy.config.cluster.v3.Cluster': [
        1, 2, 3, 4, 6, 10, 19, 23, 24, 25, 27, 33, 37, 38, 41, 42, 57,
      ],
      'envoy.config.cluster.v3.Cluster.EdsClusterConfig': [1, 2],
      'envoy.config.cluster.v3.Cluster.CommonLbConfig': [8],
      'envoy.config.cluster.v3.CircuitBreakers': [1],
      'envoy.config.cluster.v3.CircuitBreakers.Thresholds': [1, 2, 3, 4, 5],
      'envoy.config.core.v3.ConfigSource': [1, 2, 3, 4, 5, 6, 8],
      'envoy.config.core.v3.AggregatedConfigSource': [],
      'envoy.config.core.v3.SelfConfigSource': [1],
      'google.protobuf.UInt32Value': [1],
      'google.protobuf.Duration': [1, 2],
    };
    for (const [name, ids] of Object.entries(read)) {
      const declared = messageCodec(name as keyof Messages)
        .type.fieldsArray.map((field) => field.id)
        .sort((a, b) => a - b);
      assert.deepEqual(declared, ids, name);
    }
  });
});
