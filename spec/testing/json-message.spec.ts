// Resources written as proto3 JSON become the bytes protobuf would produce, and mistakes in the
// JSON fail loudly, naming the JSON path and the message type:
//   1. encode JSON with toMessageBytes (or through setResources);
//   2. decode the bytes with lib/codec and compare fields, or compare the error text exactly.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { messageCodec } from '../../lib/codec';
import { CLUSTER_TYPE_URL, ManagementServer, edsCluster, toMessageBytes } from '../../lib/testing';
import { AdsTestClient } from './ads-test-client';

const CLUSTER = 'envoy.config.cluster.v3.Cluster';
const cluster = messageCodec(CLUSTER);
const endpoints = messageCodec('envoy.config.endpoint.v3.ClusterLoadAssignment');

function decodeCluster(json: object) {
  return cluster.decode(toMessageBytes(`type.googleapis.com/${CLUSTER}`, json));
}

function long(value: unknown): number {
  return typeof value === 'number' ? value : (value as { toNumber(): number }).toNumber();
}

describe('toMessageBytes', () => {
  it('snake case and lower camel case keys give the same bytes', () => {
    const snake = toMessageBytes(CLUSTER, {
      name: 'A',
      eds_cluster_config: { service_name: 'a', eds_config: { ads: {} } },
    });
    const camel = toMessageBytes(CLUSTER, {
      name: 'A',
      edsClusterConfig: { serviceName: 'a', edsConfig: { ads: {} } },
    });
    assert.deepEqual(snake, camel);
    assert.equal(cluster.decode(snake).edsClusterConfig?.serviceName, 'a');
  });

  it('any with at type is encoded recursively', () => {
    const aggregate = 'type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig';
    const decoded = decodeCluster({
      name: 'agg',
      cluster_type: {
        name: 'envoy.clusters.aggregate',
        typed_config: { '@type': aggregate, clusters: ['x', 'y'] },
      },
    });
    const any = decoded.clusterType!.typedConfig!;
    assert.equal(any.type_url, aggregate);
    const config = messageCodec('envoy.extensions.clusters.aggregate.v3.ClusterConfig').decode(
      any.value,
    );
    assert.deepEqual(config.clusters, ['x', 'y']);
  });

  it('any of a well-known type takes its json under value', () => {
    const bytes = toMessageBytes('google.protobuf.Any', {
      '@type': 'type.googleapis.com/google.protobuf.Duration',
      value: '2s',
    });
    const any = messageCodec('google.protobuf.Any').decode(bytes);
    assert.equal(long(messageCodec('google.protobuf.Duration').decode(any.value).seconds), 2);
  });

  it('any in wire form takes base64 bytes', () => {
    const any = messageCodec('google.protobuf.Any').decode(
      toMessageBytes('google.protobuf.Any', { type_url: 'type.googleapis.com/x.Y', value: 'AQID' }),
    );
    assert.equal(any.type_url, 'type.googleapis.com/x.Y');
    assert.deepEqual([...any.value], [1, 2, 3]);
  });

  it('durations are strings or seconds and nanos', () => {
    const seconds = (json: unknown) => {
      const d = decodeCluster({ name: 'A', connect_timeout: json }).connectTimeout!;
      return [long(d.seconds), d.nanos];
    };
    assert.deepEqual(seconds('1.5s'), [1, 500_000_000]);
    assert.deepEqual(seconds('-0.25s'), [0, -250_000_000]);
    assert.deepEqual(seconds('3s'), [3, 0]);
    assert.deepEqual(seconds({ seconds: '4', nanos: 7 }), [4, 7]);
    assert.deepEqual(seconds({ seconds: 5 }), [5, 0]);
    assert.throws(() => seconds('5m'), {
      message: 'connect_timeout: expected a duration like "1.5s", got "5m"',
    });
  });

  it('wrappers are plain scalars', () => {
    const json = {
      cluster_name: 'A',
      endpoints: [
        { load_balancing_weight: 3, lb_endpoints: [{ load_balancing_weight: { value: 4 } }] },
      ],
    };
    const decoded = endpoints.decode(toMessageBytes(endpoints.fullName, json));
    assert.equal(decoded.endpoints[0]!.loadBalancingWeight?.value, 3);
    assert.equal(decoded.endpoints[0]!.lbEndpoints[0]!.loadBalancingWeight?.value, 4);
  });

  it('structs are plain json', () => {
    const decoded = decodeCluster({
      name: 'A',
      metadata: {
        filter_metadata: { 'com.example': { n: 1, list: [true, null, 'x'], o: { k: 'v' } } },
      },
    });
    // A Cluster's metadata stays bytes after decoding (decision 0081): decoded here on its own.
    const metadata = messageCodec('envoy.config.core.v3.Metadata').decode(decoded.metadata!);
    const struct = metadata.filterMetadata['com.example']!;
    assert.equal(struct.fields['n']!.numberValue, 1);
    const list = struct.fields['list']!.listValue!.values;
    assert.deepEqual(
      list.map((v) => v.kind),
      ['boolValue', 'nullValue', 'stringValue'],
    );
    assert.equal(struct.fields['o']!.structValue!.fields['k']!.stringValue, 'v');
  });

  it('enums are names or numbers', () => {
    assert.equal(decodeCluster({ name: 'A', type: 'LOGICAL_DNS' }).type, 2);
    assert.equal(decodeCluster({ name: 'A', type: 3 }).type, 3);
    assert.throws(() => decodeCluster({ name: 'A', lb_policy: 'RANDOMISH' }), {
      message:
        'lb_policy: unknown value "RANDOMISH" for enum envoy.config.cluster.v3.Cluster.LbPolicy ' +
        '(one of ROUND_ROBIN, LEAST_REQUEST, RING_HASH, RANDOM, MAGLEV, CLUSTER_PROVIDED, ' +
        'LOAD_BALANCING_POLICY_CONFIG)',
    });
  });

  it('a top level at type naming the message is accepted', () => {
    const url = `type.googleapis.com/${CLUSTER}`;
    assert.deepEqual(
      toMessageBytes(url, { '@type': url, name: 'A' }),
      toMessageBytes(url, { name: 'A' }),
    );
    assert.throws(() => toMessageBytes(url, { '@type': 'type.googleapis.com/x.Y', name: 'A' }), {
      message: '@type: expected envoy.config.cluster.v3.Cluster, got "type.googleapis.com/x.Y"',
    });
  });

  it('null means unset', () => {
    assert.equal(decodeCluster({ name: 'A', eds_cluster_config: null }).edsClusterConfig, null);
  });

  it('unknown field names the json path and the message type', () => {
    assert.throws(() => decodeCluster({ name: 'A', eds_cluster_config: { bogus: 1 } }), {
      message:
        'eds_cluster_config.bogus: no such field in envoy.config.cluster.v3.Cluster.EdsClusterConfig',
    });
    assert.throws(() => decodeCluster({ name: 'A', constructor: 1 }), {
      message: 'constructor: no such field in envoy.config.cluster.v3.Cluster',
    });
  });

  it('type errors name the json path', () => {
    assert.throws(() => decodeCluster({ name: 7 }), { message: 'name: expected a string, got 7' });
    assert.throws(
      () =>
        endpoints.decode(
          toMessageBytes(endpoints.fullName, { cluster_name: 'A', endpoints: [{ priority: -1 }] }),
        ),
      { message: 'endpoints[0].priority: -1 is out of range for uint32' },
    );
    assert.throws(
      () =>
        toMessageBytes(CLUSTER, {
          name: 'A',
          cluster_type: { typed_config: { '@type': 'type.googleapis.com/no.Such' } },
        }),
      {
        message: 'cluster_type.typed_config.@type: unknown message type "no.Such" (not in protos/)',
      },
    );
    assert.throws(() => toMessageBytes(CLUSTER, { name: 'A', type: 'EDS', cluster_type: {} }), {
      message:
        'cluster_type: oneof cluster_discovery_type of envoy.config.cluster.v3.Cluster already set by "type"',
    });
  });
});

describe('setResources with JSON', () => {
  const servers: ManagementServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('errors are prefixed with the type and index and change nothing', async () => {
    const server = await ManagementServer.start();
    servers.push(server);
    assert.throws(
      () =>
        server.setResources('cluster', [
          edsCluster('A'),
          { name: 'B', eds_cluster_config: { bogus: 1 } },
        ]),
      {
        message:
          'cluster[1].eds_cluster_config.bogus: no such field in envoy.config.cluster.v3.Cluster.EdsClusterConfig',
      },
    );
    assert.throws(() => server.setResources('cds', [edsCluster('A'), edsCluster('A')]), {
      message: 'cluster[1]: duplicate resource name "A"',
    });
    assert.throws(() => server.setResources('cluster', [{ type: 'EDS' }]), {
      message: 'cluster[0]: a resource needs a non-empty name',
    });
    assert.throws(() => server.setResources('clusters', []), /unknown resource type "clusters"/);
    // Nothing was applied: the first good set gets version 1.
    server.setResources('cluster', [edsCluster('A')]);
    const client = AdsTestClient.open(server.address);
    try {
      client.send({ typeUrl: CLUSTER_TYPE_URL, resourceNames: ['A'] });
      assert.equal((await client.next()).versionInfo, '1');
    } finally {
      client.close();
    }
  });
});
