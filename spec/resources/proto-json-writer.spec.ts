// lib/proto-json-writer.ts writes the canonical proto3 JSON that REST-JSON xDS puts on the wire:
// read back with lib/proto-json.ts it gives the same message, for every well-known type our
// resources use (Any with `@type`, Duration, Struct, wrappers, enums, maps, int64).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lookupMessageType } from '../../lib/codec';
import { toMessageBytes } from '../../lib/proto-json';
import { toProtoJson } from '../../lib/proto-json-writer';
import { edsCluster, endpoints, listener, routeConfig } from '../../lib/testing';

const CLUSTER = 'envoy.config.cluster.v3.Cluster';

/** The message with every field, defaults included: equal messages, whatever their bytes. */
function decoded(fullName: string, bytes: Uint8Array): unknown {
  const type = lookupMessageType(fullName)!;
  const options = { defaults: true, longs: String, enums: String, bytes: String, oneofs: true };
  return type.toObject(type.decode(bytes), options);
}

function roundTrip(fullName: string, json: unknown): unknown {
  const bytes = toMessageBytes(fullName, json);
  const written = toProtoJson(fullName, bytes);
  const back = toMessageBytes(fullName, written);
  assert.deepEqual(decoded(fullName, back), decoded(fullName, bytes));
  // Writing what was read writes the same JSON.
  assert.deepEqual(toProtoJson(fullName, back), written);
  return written;
}

describe('proto3 JSON writer', () => {
  it('writes what the reader reads back to the same message', () => {
    roundTrip('envoy.config.listener.v3.Listener', listener('L', 'R'));
    roundTrip('envoy.config.route.v3.RouteConfiguration', routeConfig('R', { cluster: 'C' }));
    roundTrip(
      'envoy.config.endpoint.v3.ClusterLoadAssignment',
      endpoints('C', [{ addresses: ['10.0.0.1:80', '10.0.0.2:81'] }]),
    );
    roundTrip(CLUSTER, {
      ...edsCluster('C'),
      connect_timeout: '1.25s',
      metadata: { filter_metadata: { m: { n: 1, s: 'x', l: [true, null, { k: 'v' }] } } },
      circuit_breakers: { thresholds: [{ max_requests: 7 }] },
    });
  });

  it('uses the canonical forms: camelCase, enum names, Duration text, @type', () => {
    const json = roundTrip(CLUSTER, {
      ...edsCluster('C'),
      connect_timeout: '1.5s',
      lb_policy: 'RING_HASH',
    }) as Record<string, unknown>;
    assert.equal(json['connectTimeout'], '1.5s');
    assert.equal(json['lbPolicy'], 'RING_HASH');
    assert.equal(json['type'], 'EDS');
    const hcm = (
      roundTrip('envoy.config.listener.v3.Listener', listener('L', 'R')) as {
        apiListener: { apiListener: Record<string, unknown> };
      }
    ).apiListener.apiListener;
    assert.match(String(hcm['@type']), /HttpConnectionManager$/);
    assert.equal((hcm['rds'] as Record<string, unknown>)['routeConfigName'], 'R');
  });
});
