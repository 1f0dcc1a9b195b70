// The fault injection filter's config (gRFC A33), rule by rule, where a client meets it: in the
// Listener's http_filters and in typed_per_filter_config overrides of a virtual host, route or
// weighted cluster:
//   1. build a valid Listener or RouteConfiguration carrying one HTTPFault and change one thing;
//   2. encode it, decode it with the resource type;
//   3. expect the exact parsed config, or the exact `path: message` errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ListenerUpdate } from '../../lib/resources/listener';
import type {
  FaultInjectionConfig,
  RouteConfigUpdate,
  VirtualHost,
} from '../../lib/resources/route-config';
import { decodeListener, listener, routerFilter } from './fixtures/listener-fixtures';
import {
  decodeRouteConfig,
  duration,
  errorsOf,
  FAULT_TYPE,
  rawAny,
  resourceOf,
  route,
  routeConfig,
  TYPE_PREFIX,
  virtualHost,
  type Obj,
} from './fixtures/route-fixtures';

const FAULT_URL = TYPE_PREFIX + FAULT_TYPE;
const F = 'api_listener.api_listener.http_filters[0].typed_config';

/** An Any holding an HTTPFault with these (camelCase) fields. */
function faultAny(fields: Obj = {}): Obj {
  return { '@type': FAULT_URL, ...fields };
}

function listenerWith(typedConfig: Obj): Obj {
  return listener({ httpFilters: [{ name: 'fault', typedConfig }, routerFilter()] });
}

/** The parsed config of a Listener whose fault filter has these fields. */
function faultOf(fields: Obj): FaultInjectionConfig | undefined {
  const update = resourceOf<ListenerUpdate>(decodeListener(listenerWith(faultAny(fields))));
  return update.httpConnectionManager.httpFilters[0]!.fault;
}

function faultErrors(fields: Obj): string[] {
  return errorsOf(decodeListener(listenerWith(faultAny(fields))));
}

const HUNDRED_PERCENT = { numerator: 100, denominator: 100 };

describe('HTTPFault in http_filters (A33)', () => {
  it('parses an empty HTTPFault as a filter that injects nothing', () => {
    assert.deepEqual(faultOf({}), {});
  });

  it('reads a fixed delay and its percentage', () => {
    const delay = { fixedDelay: duration(1500), percentage: { numerator: 30 } };
    assert.deepEqual(faultOf({ delay }), {
      delay: { type: 'fixed', delayMs: 1500, percentage: { numerator: 30, denominator: 100 } },
    });
  });

  it('reads a header delay', () => {
    const delay = { headerDelay: {}, percentage: { numerator: 100 } };
    assert.deepEqual(faultOf({ delay }), {
      delay: { type: 'header', percentage: HUNDRED_PERCENT },
    });
  });

  it('reads a grpc_status abort, OK included', () => {
    for (const code of [0, 7, 16]) {
      const abort = { grpcStatus: code, percentage: { numerator: 100 } };
      assert.deepEqual(faultOf({ abort }), {
        abort: { type: 'grpc', code, percentage: HUNDRED_PERCENT },
      });
    }
  });

  it('maps http_status to a gRPC code as A33 says (anything unlisted, 200 included, is UNKNOWN)', () => {
    const table: [number, number][] = [
      [400, 13], // INTERNAL
      [401, 16], // UNAUTHENTICATED
      [403, 7], // PERMISSION_DENIED
      [404, 12], // UNIMPLEMENTED
      [429, 14], // UNAVAILABLE
      [502, 14],
      [503, 14],
      [504, 14],
      [200, 2], // UNKNOWN
      [418, 2],
      [500, 2],
      [599, 2],
    ];
    for (const [httpStatus, code] of table) {
      const abort = { httpStatus, percentage: { numerator: 100 } };
      assert.deepEqual(
        faultOf({ abort }),
        { abort: { type: 'http', httpStatus, code, percentage: HUNDRED_PERCENT } },
        `http_status ${httpStatus}`,
      );
    }
  });

  it('reads a header abort', () => {
    const abort = { headerAbort: {}, percentage: { numerator: 5, denominator: 'MILLION' } };
    assert.deepEqual(faultOf({ abort }), {
      abort: { type: 'header', percentage: { numerator: 5, denominator: 1_000_000 } },
    });
  });

  it('reads the percentage in every denominator, keeping a numerator above it', () => {
    const cases: [string, number][] = [
      ['HUNDRED', 100],
      ['TEN_THOUSAND', 10_000],
      ['MILLION', 1_000_000],
    ];
    for (const [name, denominator] of cases) {
      const percentage = { numerator: 2_000_000, denominator: name };
      const config = faultOf({ delay: { fixedDelay: duration(5), percentage } });
      assert.deepEqual(config?.delay?.percentage, { numerator: 2_000_000, denominator }, name);
    }
  });

  it('reads an unset percentage as 0 %', () => {
    const config = faultOf({ delay: { fixedDelay: duration(5) }, abort: { grpcStatus: 14 } });
    assert.deepEqual(config?.delay?.percentage, { numerator: 0, denominator: 100 });
    assert.deepEqual(config?.abort?.percentage, { numerator: 0, denominator: 100 });
  });

  it('reads max_active_faults, 0 included; absent when unset (no limit)', () => {
    assert.deepEqual(faultOf({ maxActiveFaults: { value: 3 } }), { maxActiveFaults: 3 });
    assert.deepEqual(faultOf({ maxActiveFaults: { value: 0 } }), { maxActiveFaults: 0 });
    assert.equal('maxActiveFaults' in faultOf({})!, false);
  });

  it('freezes the parsed config', () => {
    const config = faultOf({
      delay: { fixedDelay: duration(5), percentage: { numerator: 1 } },
      abort: { grpcStatus: 2 },
    })!;
    for (const o of [config, config.delay, config.delay!.percentage, config.abort]) {
      assert.ok(Object.isFrozen(o));
    }
  });

  it('rejects config bytes that do not parse', () => {
    const bad = rawAny(FAULT_TYPE, new Uint8Array([0x0a, 0x05]));
    const errors = errorsOf(decodeListener(listenerWith(bad)));
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, new RegExp(`^${escape(F)}: can't parse HTTPFault: `));
  });

  it('rejects an HTTPFault given as a TypedStruct', () => {
    for (const wrapper of ['xds.type.v3.TypedStruct', 'udpa.type.v1.TypedStruct']) {
      const typedStruct = { '@type': TYPE_PREFIX + wrapper, typeUrl: FAULT_URL };
      assert.deepEqual(errorsOf(decodeListener(listenerWith(typedStruct))), [
        `${F}: unsupported value TypedStruct for ${FAULT_TYPE}`,
      ]);
    }
  });

  // C-core and grpc-go read these as "no delay" / "no abort"; a NACK would drop the whole
  // Listener (issue 20).
  it('reads a delay with neither fixed_delay nor header_delay as no delay', () => {
    assert.deepEqual(faultOf({ delay: { percentage: { numerator: 1 } } }), {});
  });

  it('rejects an out-of-range fixed_delay', () => {
    assert.deepEqual(faultErrors({ delay: { fixedDelay: { seconds: -1, nanos: 1e9 } } }), [
      `${F}.delay.fixed_delay.seconds: must be in range [0, 315576000000]`,
      `${F}.delay.fixed_delay.nanos: must be in range [0, 999999999]`,
    ]);
  });

  it('reads an abort with no error type as no abort', () => {
    const delay = { fixedDelay: duration(5), percentage: { numerator: 100 } };
    assert.deepEqual(faultOf({ delay, abort: { percentage: { numerator: 100 } } }), {
      delay: { type: 'fixed', delayMs: 5, percentage: HUNDRED_PERCENT },
    });
  });

  it('rejects a grpc_status above 16', () => {
    assert.deepEqual(faultErrors({ abort: { grpcStatus: 17 } }), [
      `${F}.abort.grpc_status: must be in range [0, 16]`,
    ]);
  });

  it('rejects an http_status outside [200, 599]', () => {
    for (const httpStatus of [0, 199, 600]) {
      assert.deepEqual(faultErrors({ abort: { httpStatus } }), [
        `${F}.abort.http_status: must be in range [200, 599]`,
      ]);
    }
  });

  it('rejects an unknown percentage denominator', () => {
    const percentage = { numerator: 1, denominator: 7 };
    assert.deepEqual(
      faultErrors({
        delay: { headerDelay: {}, percentage },
        abort: { headerAbort: {}, percentage },
      }),
      [
        `${F}.delay.percentage.denominator: unsupported value 7`,
        `${F}.abort.percentage.denominator: unsupported value 7`,
      ],
    );
  });

  it('names every problem of one config in one pass', () => {
    assert.deepEqual(
      faultErrors({ delay: { fixedDelay: { seconds: -1 } }, abort: { grpcStatus: 99 } }),
      [
        `${F}.delay.fixed_delay.seconds: must be in range [0, 315576000000]`,
        `${F}.abort.grpc_status: must be in range [0, 16]`,
      ],
    );
  });
});

describe('HTTPFault in typed_per_filter_config (A33, A39)', () => {
  const R0 = 'virtual_hosts[0].routes[0]';
  const filterConfig = (config: Obj, isOptional: boolean) => ({
    '@type': TYPE_PREFIX + 'envoy.config.route.v3.FilterConfig',
    config,
    isOptional,
  });
  /** A RouteConfiguration with these overrides on the virtual host, the route and its cluster. */
  const withOverrides = (vh: Obj, rt: Obj, cluster: Obj) =>
    routeConfig({
      virtualHosts: [
        virtualHost({
          typedPerFilterConfig: vh,
          routes: [
            route({
              typedPerFilterConfig: rt,
              route: {
                weightedClusters: {
                  clusters: [{ name: 'a', weight: { value: 1 }, typedPerFilterConfig: cluster }],
                },
              },
            }),
          ],
        }),
      ],
    });
  const abortWith = (grpcStatus: number) => ({ abort: { grpcStatus } });
  const parsed = (grpcStatus: number) => ({
    typeUrl: FAULT_URL,
    isOptional: false,
    fault: {
      abort: { type: 'grpc', code: grpcStatus, percentage: { numerator: 0, denominator: 100 } },
    },
  });

  it('parses the override at each level, plain or inside a FilterConfig', () => {
    const config = withOverrides(
      { fault: faultAny(abortWith(1)) },
      { fault: filterConfig(faultAny(abortWith(2)), true) },
      { fault: faultAny(abortWith(3)) },
    );
    const vh: VirtualHost = resourceOf<RouteConfigUpdate>(decodeRouteConfig(config))
      .virtualHosts[0]!;
    assert.deepEqual(vh.typedPerFilterConfig, new Map([['fault', parsed(1)]]));
    assert.deepEqual(
      vh.routes[0]!.typedPerFilterConfig,
      new Map([['fault', { ...parsed(2), isOptional: true }]]),
    );
    const action = vh.routes[0]!.action;
    assert.ok(action.type === 'weighted_clusters');
    assert.deepEqual(action.clusters[0]!.typedPerFilterConfig, new Map([['fault', parsed(3)]]));
  });

  it('reports an invalid override under its own path, at each level', () => {
    const bad = faultAny({ abort: { grpcStatus: 17 } });
    const config = withOverrides({ f: bad }, { f: filterConfig(bad, false) }, { f: bad });
    assert.deepEqual(errorsOf(decodeRouteConfig(config)), [
      'virtual_hosts[0].typed_per_filter_config[f].abort.grpc_status: must be in range [0, 16]',
      `${R0}.route.weighted_clusters.clusters[0].typed_per_filter_config[f].abort.grpc_status: must be in range [0, 16]`,
      `${R0}.typed_per_filter_config[f].config.abort.grpc_status: must be in range [0, 16]`,
    ]);
  });

  it('rejects an invalid HTTPFault override even when its FilterConfig is optional', () => {
    const bad = faultAny({ abort: { grpcStatus: 99 } });
    const config = withOverrides({}, { f: filterConfig(bad, true) }, {});
    assert.deepEqual(errorsOf(decodeRouteConfig(config)), [
      `${R0}.typed_per_filter_config[f].config.abort.grpc_status: must be in range [0, 16]`,
    ]);
  });

  it('rejects an HTTPFault override given as a TypedStruct', () => {
    const typedStruct = { '@type': TYPE_PREFIX + 'xds.type.v3.TypedStruct', typeUrl: FAULT_URL };
    assert.deepEqual(errorsOf(decodeRouteConfig(withOverrides({ f: typedStruct }, {}, {}))), [
      `virtual_hosts[0].typed_per_filter_config[f]: unsupported value TypedStruct for ${FAULT_TYPE}`,
    ]);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
