// gRFC A55: the stateful session filter's config (`StatefulSession`, in a Listener's HTTP filter
// chain) and its per-route override (`StatefulSessionPerRoute`), decoded and validated. The only
// session state gRPC knows is the cookie (`CookieBasedSessionState`); any other is an error.
import { typeNameOfUrl } from '../../codec';
import type { Cookie, StatefulSession } from '../../generated/protos';
import type { ValidationErrors } from '../../validation-errors';
import { decodeMessage } from '../any';
import { durationMs } from '../common';
import type { SessionCookie, StatefulSessionConfig } from './update';

export const STATEFUL_SESSION_FILTER_TYPE =
  'envoy.extensions.filters.http.stateful_session.v3.StatefulSession';
export const STATEFUL_SESSION_PER_ROUTE_TYPE =
  'envoy.extensions.filters.http.stateful_session.v3.StatefulSessionPerRoute';
const COOKIE_STATE_TYPE =
  'envoy.extensions.http.stateful_session.cookie.v3.CookieBasedSessionState';

/** The filter with nothing to do: no session state, or disabled by an override. */
const NO_SESSION: StatefulSessionConfig = Object.freeze({ cookie: undefined });

/** A TypedStruct carries JSON, which gRPC does not read for this filter (nor does C-core). */
function bytesOf(typeName: string, value: Uint8Array | undefined, errors: ValidationErrors) {
  if (value === undefined) errors.add(`unsupported value TypedStruct for ${typeName}`);
  return value;
}

/** The filter's own config (an `http_filters[i].typed_config`) at the current path. */
export function validateStatefulSessionFilter(
  value: Uint8Array | undefined,
  errors: ValidationErrors,
): StatefulSessionConfig | undefined {
  const bytes = bytesOf(STATEFUL_SESSION_FILTER_TYPE, value, errors);
  const config = bytes && decodeMessage(STATEFUL_SESSION_FILTER_TYPE, bytes, errors);
  return config && validateStatefulSession(config, errors);
}

/**
 * A `StatefulSessionPerRoute` override at the current path: `disabled`, or without a
 * `stateful_session` (as C-core reads it), turns the filter off for the route.
 */
export function validateStatefulSessionPerRoute(
  value: Uint8Array | undefined,
  errors: ValidationErrors,
): StatefulSessionConfig | undefined {
  const bytes = bytesOf(STATEFUL_SESSION_PER_ROUTE_TYPE, value, errors);
  const override = bytes && decodeMessage(STATEFUL_SESSION_PER_ROUTE_TYPE, bytes, errors);
  if (!override) return undefined;
  if (override.disabled || !override.statefulSession) return NO_SESSION;
  const session = override.statefulSession;
  return errors.field('stateful_session', () => validateStatefulSession(session, errors));
}

function validateStatefulSession(
  config: StatefulSession,
  errors: ValidationErrors,
): StatefulSessionConfig | undefined {
  const state = config.sessionState;
  if (!state) return NO_SESSION;
  return errors.field('session_state', () => {
    const any = state.typedConfig;
    if (!any) {
      errors.addAt('typed_config', 'field not present');
      return undefined;
    }
    return errors.field('typed_config', () => {
      const typeName = typeNameOfUrl(any.type_url);
      if (typeName !== COOKIE_STATE_TYPE) {
        errors.add(`unsupported session state type ${typeName || '""'}`);
        return undefined;
      }
      const cookieState = decodeMessage(COOKIE_STATE_TYPE, any.value, errors);
      if (!cookieState) return undefined;
      const cookie = cookieState.cookie;
      if (!cookie) {
        errors.addAt('cookie', 'field not present');
        return undefined;
      }
      const before = errors.count;
      const validated = errors.field('cookie', () => validateCookie(cookie, errors));
      return errors.count === before ? Object.freeze({ cookie: validated }) : undefined;
    });
  });
}

function validateCookie(cookie: Cookie, errors: ValidationErrors): SessionCookie {
  if (cookie.name === '') errors.addAt('name', 'must be non-empty');
  const ttl = cookie.ttl;
  const ttlMs = ttl ? errors.field('ttl', () => durationMs(ttl, errors)) : 0;
  return Object.freeze({
    name: cookie.name,
    path: cookie.path,
    ttlSeconds: Math.floor(ttlMs / 1000),
  });
}
