// The resource builders produce the resources their names promise, as gRPC clients expect
// them: each builder's JSON is encoded as the server would, decoded with lib/codec, and checked.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { messageCodec } from '../../lib/codec';
import {
  aggregateCluster,
  edsCluster,
  endpoints,
  listener,
  logicalDnsCluster,
  routeConfig,
  toMessageBytes,
} from '../../lib/testing';

const clusterCodec = messageCodec('envoy.config.cluster.v3.Cluster');
const endpointCodec = messageCodec('envoy.config.endpoint.v3.ClusterLoadAssignment');

describe('resource builders', () => {
  it('listener is an api listener with rds over ads and the router', () => {
    const codec = messageCodec('envoy.config.listener.v3.Listener');
    const decoded = codec.decode(toMessageBytes(codec.fullName, listener('L', 'R')));
    assert.equal(decoded.name, 'L');
    const any = decoded.apiListener!.apiListener!;
    assert.match(any.type_url, /\.HttpConnectionManager$/);
    const hcm = messageCodec(
      'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
    ).decode(any.value);
    assert.equal(hcm.rds?.routeConfigName, 'R');
    assert.notEqual(hcm.rds?.configSource?.ads, null);
    assert.equal(hcm.httpFilters.length, 1);
    assert.match(hcm.httpFilters[0]!.typedConfig!.type_url, /\.router\.v3\.Router$/);
  });

  it('route config sends every request to the cluster', () => {
    const codec = messageCodec('envoy.config.route.v3.RouteConfiguration');
    const decoded = codec.decode(
      toMessageBytes(codec.fullName, routeConfig('R', { cluster: 'C', domains: ['a.example'] })),
    );
    const host = decoded.virtualHosts[0]!;
    assert.deepEqual(host.domains, ['a.example']);
    assert.equal(host.routes[0]!.match?.prefix, '');
    assert.equal(host.routes[0]!.route?.cluster, 'C');
    const wildcard = codec.decode(
      toMessageBytes(codec.fullName, routeConfig('R', { cluster: 'C' })),
    );
    assert.deepEqual(wildcard.virtualHosts[0]!.domains, ['*']);
  });

  it('eds cluster uses ads and an optional service name', () => {
    const plain = clusterCodec.decode(toMessageBytes(clusterCodec.fullName, edsCluster('A')));
    assert.equal(plain.type, 3); // EDS
    assert.equal(plain.edsClusterConfig?.serviceName, '');
    assert.notEqual(plain.edsClusterConfig?.edsConfig?.ads, null);
    const named = clusterCodec.decode(
      toMessageBytes(clusterCodec.fullName, edsCluster('A', { serviceName: 'a-eds' })),
    );
    assert.equal(named.edsClusterConfig?.serviceName, 'a-eds');
  });

  it('logical dns cluster has one locality with one endpoint', () => {
    const decoded = clusterCodec.decode(
      toMessageBytes(clusterCodec.fullName, logicalDnsCluster('D', 'dns.example', 443)),
    );
    assert.equal(decoded.type, 2); // LOGICAL_DNS
    const socket = decoded.loadAssignment!.endpoints[0]!.lbEndpoints[0]!.endpoint!.address!;
    assert.equal(socket.socketAddress?.address, 'dns.example');
    assert.equal(socket.socketAddress?.portValue, 443);
  });

  it('aggregate cluster lists its children in order', () => {
    const decoded = clusterCodec.decode(
      toMessageBytes(clusterCodec.fullName, aggregateCluster('G', ['b', 'a'])),
    );
    const any = decoded.clusterType!.typedConfig!;
    assert.equal(
      any.type_url,
      'type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig',
    );
    const config = messageCodec('envoy.extensions.clusters.aggregate.v3.ClusterConfig').decode(
      any.value,
    );
    assert.deepEqual(config.clusters, ['b', 'a']);
  });

  it('endpoints have weighted localities by priority', () => {
    const json = endpoints('A', [
      { addresses: ['127.0.0.1:8001', '[::1]:8002'] },
      {
        priority: 1,
        weight: 5,
        locality: { region: 'r', subZone: 's' },
        addresses: ['10.0.0.1:80'],
      },
    ]);
    const decoded = endpointCodec.decode(toMessageBytes(endpointCodec.fullName, json));
    assert.equal(decoded.clusterName, 'A');
    const [first, second] = decoded.endpoints;
    assert.deepEqual({ ...first!.locality! }, { region: '', zone: '', subZone: '' });
    assert.equal(first!.loadBalancingWeight?.value, 1);
    assert.equal(first!.priority, 0);
    assert.deepEqual(
      first!.lbEndpoints.map((e) => [
        e.endpoint!.address!.socketAddress!.address,
        e.endpoint!.address!.socketAddress!.portValue,
      ]),
      [
        ['127.0.0.1', 8001],
        ['::1', 8002],
      ],
    );
    assert.equal(second!.priority, 1);
    assert.equal(second!.loadBalancingWeight?.value, 5);
    assert.deepEqual({ ...second!.locality! }, { region: 'r', zone: '', subZone: 's' });
    assert.throws(() => endpoints('A', [{ addresses: ['nohost'] }]), /host:port/);
  });
});
