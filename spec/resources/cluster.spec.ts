// Cluster decoding: discovery types (EDS, LOGICAL_DNS, aggregate), lrs_server, circuit breakers
// and the general contract of decode(). Each rule has a valid case and an invalid one whose
// exact `path: message` is asserted. LB policy, outlier detection and TLS live in sibling specs.
//   1. Build a Cluster from a readable fixture and encode it as a server would.
//   2. Decode it with clusterResourceType.decode(bytes, { server }).
//   3. Compare the whole update, or the exact list of errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { clusterResourceType, type ClusterUpdate } from '../../lib/resources/cluster';
import {
  SERVER,
  URLS,
  aggregateCluster,
  clusterErrors,
  edsCluster,
  encodeCluster,
  loadAssignment,
  logicalDnsCluster,
  rawAny,
  socketEndpoint,
  validCluster,
} from './fixtures/cluster-fixtures';

const DEFAULT_LB = { name: 'wrr_locality', child: { name: 'round_robin' } };

/** The LOGICAL_DNS fixture with the one socket address replaced. */
function dnsWithSocket(socketAddress: Record<string, unknown>) {
  return logicalDnsCluster({ loadAssignment: loadAssignment(socketEndpoint(socketAddress)) });
}

const DNS_SOCKET = 'load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address';

describe('Cluster: EDS', () => {
  it('decodes a minimal EDS cluster with every default', () => {
    const expected: ClusterUpdate = {
      name: 'cluster-a',
      type: 'EDS',
      edsServiceName: 'eds-a',
      lrsServer: undefined,
      maxConcurrentRequests: 1024,
      lbPolicy: { name: 'wrr_locality', child: { name: 'round_robin' } },
      outlierDetection: undefined,
      security: undefined,
      overrideHostStatus: ['UNKNOWN', 'HEALTHY'],
    };
    assert.deepStrictEqual(validCluster(edsCluster()), expected);
  });

  it('leaves edsServiceName undefined when service_name is empty, and accepts self', () => {
    const update = validCluster(
      edsCluster({ edsClusterConfig: { edsConfig: { self: {} }, serviceName: '' } }),
    );
    assert.equal(update.type, 'EDS');
    assert.ok(update.type === 'EDS' && update.edsServiceName === undefined);
  });

  it('requires eds_cluster_config', () => {
    assert.deepStrictEqual(clusterErrors(edsCluster({ edsClusterConfig: undefined })), [
      'eds_cluster_config: field not present',
    ]);
  });

  it('requires eds_config', () => {
    assert.deepStrictEqual(clusterErrors(edsCluster({ edsClusterConfig: { serviceName: 'x' } })), [
      'eds_cluster_config.eds_config: field not present',
    ]);
  });

  it('rejects an eds_config that is neither ADS nor self', () => {
    const json = edsCluster({ edsClusterConfig: { edsConfig: { path: '/etc/eds.yaml' } } });
    assert.deepStrictEqual(clusterErrors(json), [
      'eds_cluster_config.eds_config: must be ADS or self',
    ]);
  });

  it('accepts an xdstp: cluster name with a service_name (A47)', () => {
    const name = 'xdstp://authority/envoy.config.cluster.v3.Cluster/a';
    const update = validCluster(edsCluster({ name }));
    assert.ok(update.type === 'EDS' && update.edsServiceName === 'eds-a');
  });

  it('rejects an xdstp: cluster name without a service_name (A47)', () => {
    const name = 'xdstp://authority/envoy.config.cluster.v3.Cluster/a';
    const json = edsCluster({ name, edsClusterConfig: { edsConfig: { ads: {} } } });
    assert.deepStrictEqual(clusterErrors(json), [
      'eds_cluster_config.service_name: must be non-empty for an xdstp: cluster name',
    ]);
  });
});

describe('Cluster: discovery type', () => {
  it('rejects an empty name', () => {
    assert.deepStrictEqual(clusterErrors(edsCluster({ name: '' })), ['name: must be non-empty']);
  });

  it('rejects a cluster with neither type nor cluster_type', () => {
    assert.deepStrictEqual(clusterErrors({ name: 'cluster-a' }), ['type: field not present']);
  });

  for (const type of ['STATIC', 'STRICT_DNS', 'ORIGINAL_DST']) {
    it(`rejects type ${type}`, () => {
      assert.deepStrictEqual(clusterErrors({ name: 'cluster-a', type }), [
        `type: unsupported value ${type}`,
      ]);
    });
  }
});

describe('Cluster: LOGICAL_DNS (A37)', () => {
  it('decodes host and port into dnsHostname', () => {
    const update = validCluster(logicalDnsCluster());
    assert.deepStrictEqual(update, {
      name: 'cluster-dns',
      type: 'LOGICAL_DNS',
      dnsHostname: 'dns.example.com:8080',
      lrsServer: undefined,
      maxConcurrentRequests: 1024,
      lbPolicy: DEFAULT_LB,
      outlierDetection: undefined,
      security: undefined,
      overrideHostStatus: ['UNKNOWN', 'HEALTHY'],
    });
  });

  it('brackets an IPv6 literal', () => {
    const update = validCluster(dnsWithSocket({ address: '2001:db8::1', portValue: 443 }));
    assert.ok(update.type === 'LOGICAL_DNS');
    assert.equal(update.dnsHostname, '[2001:db8::1]:443');
  });

  it('requires load_assignment', () => {
    assert.deepStrictEqual(clusterErrors(logicalDnsCluster({ loadAssignment: undefined })), [
      'load_assignment: field not present',
    ]);
  });

  it('requires exactly one locality', () => {
    const none = logicalDnsCluster({ loadAssignment: { clusterName: 'dns', endpoints: [] } });
    assert.deepStrictEqual(clusterErrors(none), [
      'load_assignment.endpoints: exactly one locality required, got 0',
    ]);
    const locality = { lbEndpoints: [socketEndpoint({ address: 'a', portValue: 1 })] };
    const two = logicalDnsCluster({ loadAssignment: { endpoints: [locality, locality] } });
    assert.deepStrictEqual(clusterErrors(two), [
      'load_assignment.endpoints: exactly one locality required, got 2',
    ]);
  });

  it('requires exactly one endpoint in the locality', () => {
    const endpoint = socketEndpoint({ address: 'dns.example.com', portValue: 8080 });
    const json = logicalDnsCluster({ loadAssignment: loadAssignment(endpoint, endpoint) });
    assert.deepStrictEqual(clusterErrors(json), [
      'load_assignment.endpoints[0].lb_endpoints: exactly one endpoint required, got 2',
    ]);
  });

  it('requires the endpoint, its address and its socket_address', () => {
    const lb = 'load_assignment.endpoints[0].lb_endpoints[0]';
    const cases: [Record<string, unknown>, string][] = [
      [{}, `${lb}.endpoint: field not present`],
      [{ endpoint: {} }, `${lb}.endpoint.address: field not present`],
      [
        { endpoint: { address: { pipe: { path: '/tmp/sock' } } } },
        `${lb}.endpoint.address.socket_address: field not present`,
      ],
    ];
    for (const [lbEndpoint, error] of cases) {
      const json = logicalDnsCluster({ loadAssignment: loadAssignment(lbEndpoint) });
      assert.deepStrictEqual(clusterErrors(json), [error]);
    }
  });

  it('requires a non-empty address', () => {
    assert.deepStrictEqual(clusterErrors(dnsWithSocket({ address: '', portValue: 80 })), [
      `${DNS_SOCKET}.address: must be non-empty`,
    ]);
  });

  it('requires port_value and rejects named_port', () => {
    assert.deepStrictEqual(clusterErrors(dnsWithSocket({ address: 'h' })), [
      `${DNS_SOCKET}.port_value: field not present`,
    ]);
    assert.deepStrictEqual(clusterErrors(dnsWithSocket({ address: 'h', namedPort: 'http' })), [
      `${DNS_SOCKET}.named_port: field not supported`,
    ]);
  });

  it('rejects port 0 and ports above 65535', () => {
    for (const portValue of [0, 65536]) {
      assert.deepStrictEqual(clusterErrors(dnsWithSocket({ address: 'h', portValue })), [
        `${DNS_SOCKET}.port_value: must be in range [1, 65535]`,
      ]);
    }
  });

  it('rejects a custom resolver_name', () => {
    const json = dnsWithSocket({ address: 'h', portValue: 80, resolverName: 'custom' });
    assert.deepStrictEqual(clusterErrors(json), [
      `${DNS_SOCKET}.resolver_name: field not supported`,
    ]);
  });
});

describe('Cluster: aggregate (A37)', () => {
  it('decodes the prioritized cluster names, and nothing EDS- or DNS-specific', () => {
    const update = validCluster(aggregateCluster(['b', 'c']));
    assert.deepStrictEqual(update, {
      name: 'cluster-agg',
      type: 'AGGREGATE',
      prioritizedClusterNames: ['b', 'c'],
      lrsServer: undefined,
      maxConcurrentRequests: 1024,
      lbPolicy: DEFAULT_LB,
      outlierDetection: undefined,
      security: undefined,
      overrideHostStatus: ['UNKNOWN', 'HEALTHY'],
    });
    assert.ok(!('edsServiceName' in update) && !('dnsHostname' in update));
  });

  // C-core keys on the type URL, grpc-go on the name: either identifies an aggregate (issue 20).
  for (const name of ['', 'envoy.clusters.custom_aggregate']) {
    it(`the ClusterConfig type URL alone identifies an aggregate (name ${JSON.stringify(name)})`, () => {
      const json = aggregateCluster(['b']);
      (json['clusterType'] as Record<string, unknown>)['name'] = name;
      const update = validCluster(json);
      assert.ok(update.type === 'AGGREGATE');
      assert.deepStrictEqual(update.prioritizedClusterNames, ['b']);
    });
  }

  it('rejects a cluster_type that is neither named aggregate nor of the ClusterConfig type', () => {
    const typedConfig = rawAny('type.googleapis.com/envoy.extensions.clusters.redis.v3.Config');
    const json = aggregateCluster([], {
      clusterType: { name: 'envoy.clusters.redis', typedConfig },
    });
    assert.deepStrictEqual(clusterErrors(json), [
      'cluster_type.name: unsupported value envoy.clusters.redis',
    ]);
    const bare = aggregateCluster([], { clusterType: { name: '' } });
    assert.deepStrictEqual(clusterErrors(bare), ['cluster_type.name: unsupported value ""']);
  });

  it('requires typed_config', () => {
    const json = aggregateCluster([], { clusterType: { name: 'envoy.clusters.aggregate' } });
    assert.deepStrictEqual(clusterErrors(json), ['cluster_type.typed_config: field not present']);
  });

  it('named aggregate, requires the ClusterConfig type URL', () => {
    const typedConfig = rawAny('type.googleapis.com/envoy.extensions.clusters.redis.v3.Config');
    const json = aggregateCluster([], {
      clusterType: { name: 'envoy.clusters.aggregate', typedConfig },
    });
    assert.deepStrictEqual(clusterErrors(json), [
      'cluster_type.typed_config.type_url: unsupported value ' +
        'type.googleapis.com/envoy.extensions.clusters.redis.v3.Config',
    ]);
  });

  it('rejects a ClusterConfig that does not parse', () => {
    const typedConfig = rawAny(URLS.aggregate, Uint8Array.of(0x0f));
    const json = aggregateCluster([], {
      clusterType: { name: 'envoy.clusters.aggregate', typedConfig },
    });
    assert.deepStrictEqual(clusterErrors(json), [
      "cluster_type.typed_config: can't parse ClusterConfig",
    ]);
  });

  it('requires at least one cluster, each named', () => {
    assert.deepStrictEqual(clusterErrors(aggregateCluster([])), [
      'cluster_type.typed_config.clusters: must be non-empty',
    ]);
    assert.deepStrictEqual(clusterErrors(aggregateCluster(['b', ''])), [
      'cluster_type.typed_config.clusters[1]: must be non-empty',
    ]);
  });
});

describe('Cluster: lrs_server', () => {
  it('resolves self to the server the cluster came from', () => {
    const update = validCluster(edsCluster({ lrsServer: { self: {} } }));
    assert.equal(update.lrsServer, SERVER);
  });

  it('rejects any other config source', () => {
    assert.deepStrictEqual(clusterErrors(edsCluster({ lrsServer: { ads: {} } })), [
      'lrs_server: must be self',
    ]);
  });
});

describe('Cluster: circuit breakers', () => {
  const breakers = (...thresholds: unknown[]) => edsCluster({ circuitBreakers: { thresholds } });

  it('takes max_requests from the first DEFAULT-priority threshold', () => {
    const json = breakers(
      { priority: 'HIGH', maxRequests: { value: 7 } },
      { priority: 'DEFAULT', maxRequests: { value: 500 } },
      { priority: 'DEFAULT', maxRequests: { value: 9 } },
    );
    assert.equal(validCluster(json).maxConcurrentRequests, 500);
  });

  it('defaults to 1024 with no DEFAULT threshold or no max_requests in it', () => {
    assert.equal(
      validCluster(breakers({ priority: 'HIGH', maxRequests: { value: 7 } })).maxConcurrentRequests,
      1024,
    );
    assert.equal(validCluster(breakers({ priority: 'DEFAULT' })).maxConcurrentRequests, 1024);
  });
});

describe('Cluster: decode contract', () => {
  it('collects every error of a resource in one pass', () => {
    const json = edsCluster({
      edsClusterConfig: { edsConfig: { path: '/x' } },
      lbPolicy: 'RANDOM',
      lrsServer: { ads: {} },
      outlierDetection: { maxEjectionPercent: { value: 200 } },
    });
    assert.deepStrictEqual(clusterErrors(json), [
      'eds_cluster_config.eds_config: must be ADS or self',
      'lb_policy: unsupported value RANDOM',
      'lrs_server: must be self',
      'outlier_detection.max_ejection_percent: must be in range [0, 100]',
    ]);
  });

  it('reports bytes that do not parse without a name', () => {
    const result = clusterResourceType.decode(Uint8Array.of(0x0a, 0xff), { server: SERVER });
    assert.ok('errors' in result);
    assert.equal(result.name, undefined);
    assert.equal(result.errors.length, 1);
    assert.equal(result.errors[0]!.path, '');
    assert.match(result.errors[0]!.message, /^can't parse Cluster: /);
  });

  it('freezes the update and everything in it', () => {
    const update = validCluster(aggregateCluster(['b']));
    assert.ok(Object.isFrozen(update));
    assert.ok(Object.isFrozen(update.lbPolicy));
    assert.ok(update.type === 'AGGREGATE' && Object.isFrozen(update.prioritizedClusterNames));
  });

  it('describes itself as the CDS type', () => {
    assert.equal(
      clusterResourceType.typeUrl,
      'type.googleapis.com/envoy.config.cluster.v3.Cluster',
    );
    assert.equal(clusterResourceType.typeName, 'Cluster');
    assert.equal(clusterResourceType.allResourcesRequiredInSotW, true);
  });

  it('peekName agrees with decode for valid and invalid fixtures', () => {
    const fixtures = [
      edsCluster(),
      logicalDnsCluster(),
      aggregateCluster(['b']),
      edsCluster({ name: 'xdstp://a/envoy.config.cluster.v3.Cluster/ü' }),
      edsCluster({ lbPolicy: 'MAGLEV' }),
    ];
    for (const json of fixtures) {
      const bytes = encodeCluster(json);
      const decoded = clusterResourceType.decode(bytes, { server: SERVER });
      assert.equal(clusterResourceType.peekName!(bytes), decoded.name);
    }
  });
});
