// Listener decoding (client side: api_listener → HttpConnectionManager), rule by rule:
//   1. build a readable fixture that starts valid (fixtures/listener-fixtures.ts) and change one
//      thing;
//   2. encode it, decode it with listenerResourceType;
//   3. expect the exact update, or the exact `path: message` errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { messageCodec } from '../../lib/codec';
import { listenerResourceType, type ListenerUpdate } from '../../lib/resources/listener';
import {
  decodeListener,
  HCM_TYPE_URL,
  listener,
  ROUTER_TYPE_URL,
  routerFilter,
} from './fixtures/listener-fixtures';
import {
  duration,
  errorsOf,
  FAULT_TYPE,
  rawAny,
  resourceOf,
  routeConfig,
  SERVER,
  TYPE_PREFIX,
  virtualHost,
  type Obj,
} from './fixtures/route-fixtures';

const HCM = 'api_listener.api_listener';
const FAULT_URL = TYPE_PREFIX + FAULT_TYPE;

function decodeOk(object: Obj): ListenerUpdate {
  return resourceOf(decodeListener(object));
}

function errors(object: Obj): string[] {
  return errorsOf(decodeListener(object));
}

function filtersOf(httpFilters: Obj[]) {
  return decodeOk(listener({ httpFilters })).httpConnectionManager.httpFilters;
}

function filterErrors(httpFilters: Obj[]): string[] {
  return errors(listener({ httpFilters }));
}

const ROUTER = { name: 'router', typeUrl: ROUTER_TYPE_URL, isOptional: false };

describe('Listener resource type', () => {
  it('names the LDS type and is state-of-the-world complete', () => {
    assert.equal(
      listenerResourceType.typeUrl,
      'type.googleapis.com/envoy.config.listener.v3.Listener',
    );
    assert.equal(listenerResourceType.typeName, 'Listener');
    assert.equal(listenerResourceType.allResourcesRequiredInSotW, true);
  });

  it('decodes a valid RDS Listener to the exact update', () => {
    assert.deepEqual(decodeListener(listener()), {
      name: 'listener-a',
      resource: {
        name: 'listener-a',
        httpConnectionManager: {
          routeConfigName: 'route-a',
          routeConfig: undefined,
          httpFilters: [ROUTER],
        },
      },
    });
  });

  it('freezes the update', () => {
    const update = decodeOk(listener());
    const hcm = update.httpConnectionManager;
    for (const o of [update, hcm, hcm.httpFilters, hcm.httpFilters[0]])
      assert.ok(Object.isFrozen(o));
  });

  it('reports undecodable bytes without a name', () => {
    const result = listenerResourceType.decode(new Uint8Array([0xff]), { server: SERVER });
    assert.ok('errors' in result);
    assert.equal(result.name, undefined);
    assert.match(result.errors[0]!.message, /^can't parse Listener: /);
  });

  it('collects every error in one pass', () => {
    const object = listener({
      xffNumTrustedHops: 2,
      rds: { routeConfigName: '' },
      httpFilters: [],
    });
    assert.deepEqual(errors(object), [
      `${HCM}.xff_num_trusted_hops: must be 0`,
      `${HCM}.rds.config_source: field not present`,
      `${HCM}.rds.route_config_name: must be non-empty`,
      `${HCM}.http_filters: must be non-empty`,
    ]);
  });
});

describe('api_listener', () => {
  it('rejects a Listener with neither api_listener nor address (server side: server-listener.spec)', () => {
    const server = {
      name: 'listener-a',
      filterChains: [{ filters: [{ name: 'hcm', typedConfig: { '@type': HCM_TYPE_URL } }] }],
    };
    assert.deepEqual(decodeListener(server), {
      name: 'listener-a',
      errors: [{ path: 'api_listener', message: 'field not present' }],
    });
  });

  it('requires api_listener.api_listener', () => {
    assert.deepEqual(errors({ name: 'l', apiListener: {} }), [`${HCM}: field not present`]);
  });

  it('requires an HttpConnectionManager', () => {
    const object = { name: 'l', apiListener: { apiListener: { '@type': ROUTER_TYPE_URL } } };
    assert.deepEqual(errors(object), [`${HCM}: unsupported value ${ROUTER_TYPE_URL}`]);
  });

  it('rejects an HttpConnectionManager wrapped in a TypedStruct', () => {
    const typedStruct = { '@type': TYPE_PREFIX + 'xds.type.v3.TypedStruct', typeUrl: HCM_TYPE_URL };
    assert.deepEqual(errors({ name: 'l', apiListener: { apiListener: typedStruct } }), [
      `${HCM}: unsupported value ${TYPE_PREFIX}xds.type.v3.TypedStruct`,
    ]);
  });

  it('reports HttpConnectionManager bytes that do not parse', () => {
    const any = { type_url: HCM_TYPE_URL, value: new Uint8Array([0x0a, 0x09]) };
    const [error] = errors({ name: 'l', apiListener: { apiListener: any } });
    assert.match(error!, /^api_listener\.api_listener: can't parse HttpConnectionManager: /);
  });
});

describe('route specifier', () => {
  it('accepts rds with an ads or self config source', () => {
    const rds = (configSource: Obj) => ({ rds: { configSource, routeConfigName: 'r' } });
    assert.equal(decodeOk(listener(rds({ ads: {} }))).httpConnectionManager.routeConfigName, 'r');
    assert.equal(decodeOk(listener(rds({ self: {} }))).httpConnectionManager.routeConfigName, 'r');
  });

  it('requires an ads or self config source', () => {
    assert.deepEqual(
      errors(listener({ rds: { configSource: { path: '/x' }, routeConfigName: 'r' } })),
      [`${HCM}.rds.config_source: unsupported value path: must be ads or self`],
    );
    assert.deepEqual(errors(listener({ rds: { configSource: {}, routeConfigName: 'r' } })), [
      `${HCM}.rds.config_source: config_source_specifier: field not present`,
    ]);
  });

  it('requires a route_config_name', () => {
    assert.deepEqual(errors(listener({ rds: { configSource: { ads: {} } } })), [
      `${HCM}.rds.route_config_name: must be non-empty`,
    ]);
  });

  it('validates an inline route_config with the RouteConfiguration rules', () => {
    const update = decodeOk(listener({ rds: undefined, routeConfig: routeConfig() }));
    assert.equal(update.httpConnectionManager.routeConfigName, undefined);
    assert.deepEqual(update.httpConnectionManager.routeConfig?.virtualHosts[0]?.domains, ['*']);
    assert.ok(Object.isFrozen(update.httpConnectionManager.routeConfig));
  });

  it('reports inline route_config errors under its path', () => {
    const inline = routeConfig({ virtualHosts: [virtualHost({ domains: [] })] });
    assert.deepEqual(errors(listener({ rds: undefined, routeConfig: inline })), [
      `${HCM}.route_config.virtual_hosts[0].domains: must be non-empty`,
    ]);
  });

  it('rejects scoped_routes and a missing route specifier', () => {
    assert.deepEqual(errors(listener({ rds: undefined, scopedRoutes: { name: 's' } })), [
      `${HCM}.route_specifier: unsupported value scoped_routes`,
    ]);
    assert.deepEqual(errors(listener({ rds: undefined })), [
      `${HCM}.route_specifier: field not present`,
    ]);
  });
});

describe('HttpConnectionManager settings', () => {
  it('requires xff_num_trusted_hops 0 and no original_ip_detection_extensions (A41)', () => {
    assert.deepEqual(errors(listener({ xffNumTrustedHops: 1 })), [
      `${HCM}.xff_num_trusted_hops: must be 0`,
    ]);
    const detection = {
      originalIpDetectionExtensions: [{ name: 'xff', typedConfig: rawAny('x.Xff') }],
    };
    assert.deepEqual(errors(listener(detection)), [
      `${HCM}.original_ip_detection_extensions: must be empty`,
    ]);
  });

  it('reads common_http_protocol_options.max_stream_duration (A31)', () => {
    const hcm = (options: Obj | undefined) =>
      decodeOk(listener({ commonHttpProtocolOptions: options })).httpConnectionManager;
    assert.equal(hcm({ maxStreamDuration: duration(1500) }).maxStreamDurationMs, 1500);
    assert.equal('maxStreamDurationMs' in hcm({}), false);
    assert.equal('maxStreamDurationMs' in hcm(undefined), false);
  });

  it('rejects an out-of-range max_stream_duration', () => {
    const options = { maxStreamDuration: { seconds: -1 } };
    assert.deepEqual(errors(listener({ commonHttpProtocolOptions: options })), [
      `${HCM}.common_http_protocol_options.max_stream_duration.seconds: must be in range [0, 315576000000]`,
    ]);
  });
});

describe('http_filters', () => {
  const fault = (name = 'fault', fields: Obj = {}) => ({
    name,
    typedConfig: rawAny(FAULT_TYPE),
    ...fields,
  });
  const unknown = (name: string, isOptional: boolean) => ({
    name,
    typedConfig: rawAny('x.Y'),
    isOptional,
  });

  it('keeps recognised filters in order, ending with the router', () => {
    assert.deepEqual(filtersOf([fault(), routerFilter()]), [
      { name: 'fault', typeUrl: FAULT_URL, isOptional: false, fault: {} },
      ROUTER,
    ]);
  });

  it('requires at least one filter', () => {
    assert.deepEqual(filterErrors([]), [`${HCM}.http_filters: must be non-empty`]);
  });

  it('requires non-empty, unique names', () => {
    assert.deepEqual(filterErrors([fault(''), fault('f'), fault('f'), routerFilter()]), [
      `${HCM}.http_filters[0].name: must be non-empty`,
      `${HCM}.http_filters[2].name: duplicate name "f"`,
    ]);
  });

  it('requires the router last, and only last', () => {
    assert.deepEqual(filterErrors([routerFilter(), fault()]), [
      `${HCM}.http_filters[0]: router filter must be last`,
      `${HCM}.http_filters[1]: last filter must be the router`,
    ]);
    assert.deepEqual(filterErrors([fault()]), [
      `${HCM}.http_filters[0]: last filter must be the router`,
    ]);
    assert.deepEqual(filterErrors([routerFilter('r1'), routerFilter('r2')]), [
      `${HCM}.http_filters[0]: router filter must be last`,
    ]);
  });

  it('rejects an unknown filter type unless it is optional, which is skipped', () => {
    assert.deepEqual(filterErrors([unknown('x', false), routerFilter()]), [
      `${HCM}.http_filters[0].typed_config: unsupported filter type x.Y`,
    ]);
    assert.deepEqual(filtersOf([unknown('x', true), routerFilter(), unknown('z', true)]), [ROUTER]);
  });

  it('counts a chain of only skipped filters as empty', () => {
    assert.deepEqual(filterErrors([unknown('x', true)]), [
      `${HCM}.http_filters: must be non-empty`,
    ]);
  });

  it('rejects the server-only RBAC filter unless optional', () => {
    const rbac = (isOptional: boolean) => ({
      name: 'rbac',
      typedConfig: rawAny('envoy.extensions.filters.http.rbac.v3.RBAC'),
      isOptional,
    });
    assert.deepEqual(filterErrors([rbac(false), routerFilter()]), [
      `${HCM}.http_filters[0].typed_config: filter envoy.extensions.filters.http.rbac.v3.RBAC is not supported on clients`,
    ]);
    assert.deepEqual(filtersOf([rbac(true), routerFilter()]), [ROUTER]);
  });

  it('requires typed_config (config_discovery is not supported)', () => {
    assert.deepEqual(filterErrors([{ name: 'x', isOptional: true }, routerFilter()]), [
      `${HCM}.http_filters[0].typed_config: field not present`,
    ]);
  });

  it('reads the type inside an xds.type.v3 or udpa.type.v1 TypedStruct', () => {
    const rbacUrl = TYPE_PREFIX + 'envoy.extensions.filters.http.rbac.v3.RBAC';
    const wrapped = (name: string, wrapper: string, isOptional = false) => ({
      name,
      typedConfig: { '@type': TYPE_PREFIX + wrapper, typeUrl: rbacUrl, value: { fields: {} } },
      isOptional,
    });
    // Known through the wrapper as the server-only RBAC filter: skipped when optional …
    assert.deepEqual(
      filtersOf([
        wrapped('a', 'xds.type.v3.TypedStruct', true),
        wrapped('b', 'udpa.type.v1.TypedStruct', true),
        routerFilter(),
      ]),
      [ROUTER],
    );
    // … and refused on a client otherwise.
    assert.deepEqual(
      filterErrors([
        wrapped('a', 'xds.type.v3.TypedStruct'),
        wrapped('b', 'udpa.type.v1.TypedStruct'),
        routerFilter(),
      ]),
      [0, 1].map(
        (i) =>
          `${HCM}.http_filters[${i}].typed_config: filter envoy.extensions.filters.http.rbac.v3.RBAC is not supported on clients`,
      ),
    );
  });

  it('rejects a TypedStruct with no type_url, or a router given as a TypedStruct', () => {
    const typedStruct = (typeUrl: string) => ({
      '@type': TYPE_PREFIX + 'xds.type.v3.TypedStruct',
      typeUrl,
    });
    assert.deepEqual(filterErrors([{ name: 'a', typedConfig: typedStruct('') }, routerFilter()]), [
      `${HCM}.http_filters[0].typed_config.value.type_url: must be non-empty`,
    ]);
    assert.deepEqual(
      filterErrors([{ name: 'router', typedConfig: typedStruct(ROUTER_TYPE_URL) }]),
      [
        `${HCM}.http_filters[0].typed_config: unsupported value TypedStruct for envoy.extensions.filters.http.router.v3.Router`,
      ],
    );
  });

  it('rejects router config bytes that do not parse', () => {
    const bad = {
      name: 'router',
      typedConfig: { type_url: ROUTER_TYPE_URL, value: new Uint8Array([0x0a]) },
    };
    assert.match(
      filterErrors([bad])[0]!,
      /^api_listener\.api_listener\.http_filters\[0\]\.typed_config: can't parse Router: /,
    );
  });

  it('marks optional recognised filters as optional', () => {
    assert.deepEqual(filtersOf([fault('f', { isOptional: true }), routerFilter()])[0], {
      name: 'f',
      typeUrl: FAULT_URL,
      isOptional: true,
      fault: {},
    });
  });
});

describe('peekName', () => {
  it('agrees with the decoded name', () => {
    const codec = messageCodec('envoy.config.listener.v3.Listener');
    const bytes = codec.encode(codec.fromObject(listener()));
    assert.equal(listenerResourceType.peekName?.(bytes), 'listener-a');
  });
});
