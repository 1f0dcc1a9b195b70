// gRFC A86 in the resources: a Cluster transport socket Http11ProxyUpstreamTransport (wrapping
// nothing or an UpstreamTlsContext, validated as if it were the Cluster's own), and the proxy
// address an endpoint's or its locality's typed metadata names.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  URLS,
  caContext,
  clusterErrors,
  edsCluster,
  rawAny,
  tlsSocket,
  validCluster,
  type Json,
} from './fixtures/cluster-fixtures';
import {
  assignment,
  assignmentErrors,
  lbEndpoint,
  locality,
  validAssignment,
} from './fixtures/endpoint-fixtures';

const PROXY_URL =
  'type.googleapis.com/envoy.extensions.transport_sockets.http_11_proxy.v3.Http11ProxyUpstreamTransport';
const ADDRESS_URL = 'type.googleapis.com/envoy.config.core.v3.Address';
const KEY = 'envoy.http11_proxy_transport_socket.proxy_address';
const INNER = 'transport_socket.typed_config.transport_socket.typed_config';

function proxySocket(inner?: Json): Json {
  return { typedConfig: { '@type': PROXY_URL, ...(inner ? { transportSocket: inner } : {}) } };
}

/** Metadata whose proxy-address entry is `value` (an Any as JSON). */
function proxyMetadata(value: Json): Json {
  return { metadata: { typedFilterMetadata: { [KEY]: value } } };
}

function address(socketAddress: Json | undefined): Json {
  return { '@type': ADDRESS_URL, ...(socketAddress ? { socketAddress } : {}) };
}

describe('Cluster transport_socket Http11ProxyUpstreamTransport (A86)', () => {
  it('without a wrapped socket: HTTP CONNECT, plaintext inside', () => {
    const cluster = validCluster(edsCluster({ transportSocket: proxySocket() }));
    assert.equal(cluster.httpConnect, true);
    assert.equal(cluster.security, undefined);
  });

  it('a wrapped UpstreamTlsContext gives the same security as the Cluster’s own would', () => {
    const wrapped = validCluster(
      edsCluster({ transportSocket: proxySocket(tlsSocket(caContext())) }),
    );
    const direct = validCluster(edsCluster({ transportSocket: tlsSocket(caContext()) }));
    assert.equal(wrapped.httpConnect, true);
    assert.equal(direct.httpConnect, undefined);
    assert.deepEqual(wrapped.security, direct.security);
  });

  it('NACKs a wrapped socket of another type, and a wrapped TLS context as the Cluster’s own', () => {
    assert.deepEqual(
      clusterErrors(
        edsCluster({ transportSocket: proxySocket({ typedConfig: rawAny(URLS.roundRobin) }) }),
      ),
      [`${INNER}.type_url: unsupported value ${URLS.roundRobin}`],
    );
    assert.deepEqual(
      clusterErrors(edsCluster({ transportSocket: proxySocket(tlsSocket(undefined)) })),
      [`${INNER}.common_tls_context: field not present`],
    );
  });
});

describe('EDS proxy address metadata (A86)', () => {
  const proxy = { address: '10.9.9.9', port: 3128 };
  const good = proxyMetadata(address({ address: '10.9.9.9', portValue: 3128 }));

  it("an endpoint's own proxy, else its locality's; none without either", () => {
    const update = validAssignment(
      assignment({
        endpoints: [
          locality(
            'z1',
            [
              lbEndpoint('10.0.0.1', 80),
              lbEndpoint('10.0.0.2', 80, proxyMetadata(address({ address: '::1', portValue: 8 }))),
            ],
            good,
          ),
          locality('z2', [lbEndpoint('10.0.0.3', 80)]),
        ],
      }),
    );
    const [z1, z2] = update.priorities[0]!;
    assert.deepEqual(z1!.endpoints[0]!.proxyAddress, proxy);
    assert.deepEqual(z1!.endpoints[1]!.proxyAddress, { address: '::1', port: 8 });
    assert.equal(z2!.endpoints[0]!.proxyAddress, undefined);
  });

  it('a value of another type under the key is ignored', () => {
    const update = validAssignment(
      assignment({
        endpoints: [
          locality('z1', [lbEndpoint('10.0.0.1', 80, proxyMetadata(rawAny(URLS.roundRobin)))]),
        ],
      }),
    );
    assert.equal(update.priorities[0]![0]!.endpoints[0]!.proxyAddress, undefined);
  });

  it('NACKs an Address without socket_address, an address that is not an IP, a missing port', () => {
    const at = `endpoints[0].lb_endpoints[0].metadata.typed_filter_metadata[${KEY}]`;
    const errorsOf = (value: Json) =>
      assignmentErrors(
        assignment({
          endpoints: [locality('z1', [lbEndpoint('10.0.0.1', 80, proxyMetadata(value))])],
        }),
      );
    assert.deepEqual(errorsOf(address(undefined)), [`${at}.socket_address: field not present`]);
    assert.deepEqual(errorsOf(address({ address: 'proxy.example', portValue: 1 })), [
      `${at}.socket_address.address: must be an IP address`,
    ]);
    assert.deepEqual(errorsOf(address({ address: '10.9.9.9' })), [
      `${at}.socket_address.port_value: field not present`,
    ]);
    assert.deepEqual(
      assignmentErrors(
        assignment({
          endpoints: [
            locality('z1', [lbEndpoint('10.0.0.1', 80)], proxyMetadata(address(undefined))),
          ],
        }),
      ),
      [`endpoints[0].metadata.typed_filter_metadata[${KEY}].socket_address: field not present`],
    );
  });
});
