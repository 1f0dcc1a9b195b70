// Stateful session affinity's resource fields (gRFC A55), rule by rule: the StatefulSession
// filter in a Listener's http_filters, its StatefulSessionPerRoute override in
// typed_per_filter_config, and a Cluster's common_lb_config.override_host_status. Each rule has
// a valid case and an invalid one whose exact `path: message` is asserted.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ListenerUpdate } from '../../lib/resources/listener';
import type { RouteConfigUpdate } from '../../lib/resources/route-config';
import { edsCluster, validCluster } from './fixtures/cluster-fixtures';
import { decodeListener, listener, routerFilter } from './fixtures/listener-fixtures';
import {
  decodeRouteConfig,
  duration,
  errorsOf,
  resourceOf,
  route,
  routeConfig,
  TYPE_PREFIX,
  virtualHost,
  type Obj,
} from './fixtures/route-fixtures';

const SESSION_URL =
  TYPE_PREFIX + 'envoy.extensions.filters.http.stateful_session.v3.StatefulSession';
const PER_ROUTE_URL =
  TYPE_PREFIX + 'envoy.extensions.filters.http.stateful_session.v3.StatefulSessionPerRoute';
const COOKIE_URL =
  TYPE_PREFIX + 'envoy.extensions.http.stateful_session.cookie.v3.CookieBasedSessionState';
const F = 'api_listener.api_listener.http_filters[0].typed_config';

/** A StatefulSession (camelCase fields) keeping the session in `cookie`. */
function session(cookie: Obj | undefined): Obj {
  return {
    sessionState: {
      name: 'envoy.http.stateful_session.cookie',
      typedConfig: { '@type': COOKIE_URL, ...(cookie ? { cookie } : {}) },
    },
  };
}

function listenerWith(config: Obj): Obj {
  const filter = { name: 'session', typedConfig: { '@type': SESSION_URL, ...config } };
  return listener({ httpFilters: [filter, routerFilter()] });
}

function sessionOf(config: Obj) {
  const update = resourceOf<ListenerUpdate>(decodeListener(listenerWith(config)));
  return update.httpConnectionManager.httpFilters[0]!.statefulSession;
}

function sessionErrors(config: Obj): string[] {
  return errorsOf(decodeListener(listenerWith(config)));
}

describe('StatefulSession in http_filters (A55)', () => {
  it('reads the cookie name, path and ttl (whole seconds)', () => {
    const cookie = { name: 'sticky', path: '/echo.Echo', ttl: duration(120_500) };
    assert.deepEqual(sessionOf(session(cookie)), {
      cookie: { name: 'sticky', path: '/echo.Echo', ttlSeconds: 120 },
    });
  });

  it('defaults the path to none (every RPC) and the ttl to 0 (a session cookie)', () => {
    assert.deepEqual(sessionOf(session({ name: 'sticky' })), {
      cookie: { name: 'sticky', path: '', ttlSeconds: 0 },
    });
  });

  it('without session_state, the filter is accepted and keeps no session', () => {
    assert.deepEqual(sessionOf({}), { cookie: undefined });
  });

  it('NACKs a missing cookie, an empty name and a negative ttl, each at its field', () => {
    const state = `${F}.session_state.typed_config`;
    assert.deepEqual(sessionErrors(session(undefined)), [`${state}.cookie: field not present`]);
    assert.deepEqual(sessionErrors(session({ name: '' })), [
      `${state}.cookie.name: must be non-empty`,
    ]);
    assert.deepEqual(sessionErrors(session({ name: 'sticky', ttl: { seconds: -1 } })), [
      `${state}.cookie.ttl.seconds: must be in range [0, 315576000000]`,
    ]);
  });

  it('NACKs a session state other than the cookie, and one without a typed_config', () => {
    const other = {
      sessionState: { name: 'header', typedConfig: { '@type': SESSION_URL } },
    };
    assert.deepEqual(sessionErrors(other), [
      `${F}.session_state.typed_config: unsupported session state type ` +
        'envoy.extensions.filters.http.stateful_session.v3.StatefulSession',
    ]);
    assert.deepEqual(sessionErrors({ sessionState: { name: 'x' } }), [
      `${F}.session_state.typed_config: field not present`,
    ]);
  });
});

describe('StatefulSessionPerRoute in typed_per_filter_config (A55, A39)', () => {
  function overridesOf(perRoute: Obj) {
    const config = routeConfig({
      virtualHosts: [
        virtualHost({
          routes: [
            route({ typedPerFilterConfig: { session: { '@type': PER_ROUTE_URL, ...perRoute } } }),
          ],
        }),
      ],
    });
    return decodeRouteConfig<RouteConfigUpdate>(config);
  }

  it('disabled: the filter is off for the route', () => {
    const update = resourceOf<RouteConfigUpdate>(overridesOf({ disabled: true }));
    const override = update.virtualHosts[0]!.routes[0]!.typedPerFilterConfig!.get('session')!;
    assert.deepEqual(override.statefulSession, { cookie: undefined });
  });

  it('another cookie for the route', () => {
    const update = resourceOf<RouteConfigUpdate>(
      overridesOf({ statefulSession: session({ name: 'other', path: '/' }) }),
    );
    const override = update.virtualHosts[0]!.routes[0]!.typedPerFilterConfig!.get('session')!;
    assert.deepEqual(override.statefulSession, {
      cookie: { name: 'other', path: '/', ttlSeconds: 0 },
    });
  });

  it('NACKs an invalid override with its field path', () => {
    assert.deepEqual(errorsOf(overridesOf({ statefulSession: session({ name: '' }) })), [
      'virtual_hosts[0].routes[0].typed_per_filter_config[session].stateful_session' +
        '.session_state.typed_config.cookie.name: must be non-empty',
    ]);
  });
});

describe('Cluster common_lb_config.override_host_status (A55)', () => {
  const withStatuses = (statuses: string[] | undefined) =>
    edsCluster({
      commonLbConfig: statuses === undefined ? {} : { overrideHostStatus: { statuses } },
    });

  it('defaults to UNKNOWN and HEALTHY, with or without common_lb_config', () => {
    assert.deepEqual(validCluster(edsCluster()).overrideHostStatus, ['UNKNOWN', 'HEALTHY']);
    assert.deepEqual(validCluster(withStatuses(undefined)).overrideHostStatus, [
      'UNKNOWN',
      'HEALTHY',
    ]);
  });

  it('keeps UNKNOWN, HEALTHY and DRAINING, in enum order, and ignores the others', () => {
    const cluster = withStatuses(['DRAINING', 'UNHEALTHY', 'HEALTHY', 'DEGRADED', 'UNKNOWN']);
    assert.deepEqual(validCluster(cluster).overrideHostStatus, ['UNKNOWN', 'HEALTHY', 'DRAINING']);
  });

  it('an explicitly empty set turns overriding off', () => {
    assert.deepEqual(validCluster(withStatuses([])).overrideHostStatus, []);
  });
});
