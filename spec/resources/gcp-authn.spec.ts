// The GCP authentication filter's config and the Cluster metadata naming its audience
// (gRFC A83): what is kept, and each NACK with its field path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { clusterResourceType } from '../../lib/resources/cluster';
import {
  SERVER,
  clusterErrors,
  edsCluster,
  encodeCluster,
  rawAny,
  validCluster,
} from './fixtures/cluster-fixtures';
import { decodeListener, listener, routerFilter } from './fixtures/listener-fixtures';
import {
  decodeRouteConfig,
  errorsOf,
  resourceOf,
  routeConfig,
  TYPE_PREFIX,
  virtualHost,
  type Obj,
} from './fixtures/route-fixtures';
import type { ListenerUpdate } from '../../lib/resources/listener';

const CONFIG_URL = TYPE_PREFIX + 'envoy.extensions.filters.http.gcp_authn.v3.GcpAuthnFilterConfig';
const AUDIENCE_URL = TYPE_PREFIX + 'envoy.extensions.filters.http.gcp_authn.v3.Audience';
const TYPED_STRUCT_URL = TYPE_PREFIX + 'xds.type.v3.TypedStruct';
const HCM = 'api_listener.api_listener.http_filters[0].typed_config';

/** A client Listener whose filters are gcp_authn (`config`) and the router. */
function withFilter(config: Obj): Obj {
  return listener({
    httpFilters: [
      { name: 'auth', typedConfig: { '@type': CONFIG_URL, ...config } },
      routerFilter(),
    ],
  });
}

function configOf(config: Obj) {
  const update = resourceOf(decodeListener(withFilter(config))) as ListenerUpdate;
  return update.httpConnectionManager.httpFilters[0]!.gcpAuthn;
}

describe('GcpAuthnFilterConfig (gRFC A83)', () => {
  it('keeps cache_config.cache_size, 10 by default', () => {
    assert.deepEqual(configOf({}), { cacheSize: 10 });
    assert.deepEqual(configOf({ cacheConfig: { cacheSize: { value: 3 } } }), { cacheSize: 3 });
  });

  it('NACKs a cache size of 0 and a TypedStruct config, at the filter', () => {
    assert.deepEqual(
      errorsOf(decodeListener(withFilter({ cacheConfig: { cacheSize: { value: 0 } } }))),
      [`${HCM}.cache_config.cache_size: must be greater than 0`],
    );
    const typedStruct = listener({
      httpFilters: [
        { name: 'auth', typedConfig: { '@type': TYPED_STRUCT_URL, typeUrl: CONFIG_URL } },
        routerFilter(),
      ],
    });
    assert.deepEqual(errorsOf(decodeListener(typedStruct)), [
      `${HCM}: unsupported value TypedStruct for envoy.extensions.filters.http.gcp_authn.v3.GcpAuthnFilterConfig`,
    ]);
  });

  it('validates an override in typed_per_filter_config but keeps no config from it', () => {
    const withOverride = (config: Obj) =>
      routeConfig({
        virtualHosts: [
          virtualHost({ typedPerFilterConfig: { auth: { '@type': CONFIG_URL, ...config } } }),
        ],
      });
    assert.deepEqual(
      errorsOf(decodeRouteConfig(withOverride({ cacheConfig: { cacheSize: { value: 0 } } }))),
      [
        'virtual_hosts[0].typed_per_filter_config[auth].cache_config.cache_size: must be greater than 0',
      ],
    );
    const update = resourceOf(decodeRouteConfig(withOverride({}))) as {
      virtualHosts: { typedPerFilterConfig?: ReadonlyMap<string, object> }[];
    };
    assert.deepEqual(update.virtualHosts[0]!.typedPerFilterConfig?.get('auth'), {
      typeUrl: CONFIG_URL,
      isOptional: false,
    });
  });
});

describe('Cluster metadata (gRFC A83)', () => {
  it('takes an Audience from typed_filter_metadata over filter_metadata, other keys as JSON', () => {
    const cluster = validCluster(
      edsCluster({
        metadata: {
          typedFilterMetadata: {
            auth: { '@type': AUDIENCE_URL, url: 'https://a.run.app' },
            // A type gRPC does not parse: the filter_metadata entry of that key is used.
            other: rawAny(TYPE_PREFIX + 'example.Unknown'),
          },
          filterMetadata: {
            auth: { fields: { ignored: { stringValue: 'x' } } },
            other: { fields: { n: { numberValue: 1 } } },
          },
        },
      }),
    );
    assert.deepEqual(
      cluster.metadata,
      new Map<string, unknown>([
        ['auth', { type: 'audience', url: 'https://a.run.app' }],
        ['other', { type: 'struct', json: { n: 1 } }],
      ]),
    );
    assert.equal(validCluster(edsCluster()).metadata, undefined);
  });

  it('reads a Struct field sent without a value as JSON null', () => {
    // Cluster.metadata (field 25): filter_metadata { "m": Struct { fields { key: "k" } } }, the
    // field's Value left out, as a protobuf encoder writes a default message.
    const struct = [0x0a, 0x03, 0x0a, 0x01, 0x6b];
    const entry = [0x0a, 0x01, 0x6d, 0x12, struct.length, ...struct];
    const metadata = [0x0a, entry.length, ...entry];
    const bytes = Uint8Array.from([
      ...encodeCluster(edsCluster()),
      ...[0xca, 0x01, metadata.length, ...metadata],
    ]);
    const result = clusterResourceType.decode(bytes, { server: SERVER });
    assert.ok('resource' in result, JSON.stringify(result));
    assert.deepEqual(
      result.resource.metadata,
      new Map([['m', { type: 'struct', json: { k: null } }]]),
    );
  });

  it('NACKs an Audience with an empty url', () => {
    assert.deepEqual(
      clusterErrors(
        edsCluster({ metadata: { typedFilterMetadata: { auth: { '@type': AUDIENCE_URL } } } }),
      ),
      ['metadata.typed_filter_metadata[auth].url: must be non-empty'],
    );
  });
});
