// Checks what a user passes to `new XdsClient(...)`: a wrong option fails at construction,
// naming the option, rather than misbehaving later (a timeout above 2^31 - 1 ms fires at once
// in Node; a jitter of 20 meant as percent reconnects in a tight loop).

import { status, type ChannelOptions } from '@grpc/grpc-js';
import type { MeterProvider } from '@opentelemetry/api';
import type { LbPolicyRegistry } from '../../resources/resource-type';
import { XdsError, formatFieldErrors } from '../../errors';
import { ValidationErrors } from '../../validation-errors';
import { DEFAULT_BACKOFF, type BackoffOptions } from '../transport/backoff';
import type { XdsTransportFactory } from '../transport/transport';

/** gRFC A57: how long to wait for a subscribed resource before calling it non-existent. */
export const DEFAULT_RESOURCE_TIMEOUT_MS = 15_000;

/**
 * gRFC A88: the timer on a server with `resource_timer_is_transient_error`, which reports
 * missing resources itself: the timer only detects a slow server, and waits longer.
 */
export const DEFAULT_TRANSIENT_RESOURCE_TIMEOUT_MS = 30_000;

/**
 * The does-not-exist timer of a server's resources: the `resourceTimeoutMs` option when given
 * (for every server), else A57's 15 s, or A88's 30 s on a `resource_timer_is_transient_error`
 * server.
 */
export function resourceTimeoutFor(
  configuredMs: number | undefined,
  server: { readonly resourceTimerIsTransientError?: boolean | undefined },
): number {
  if (configuredMs !== undefined) return configuredMs;
  return server.resourceTimerIsTransientError
    ? DEFAULT_TRANSIENT_RESOURCE_TIMEOUT_MS
    : DEFAULT_RESOURCE_TIMEOUT_MS;
}

export interface XdsClientOptions {
  /** A bootstrap object or JSON text; omitted: GRPC_XDS_BOOTSTRAP / GRPC_XDS_BOOTSTRAP_CONFIG. */
  bootstrap?: object | string;
  /**
   * The does-not-exist timer, in (0, 2^31 - 1] ms, for every server. Default 15 000 ms, or
   * 30 000 ms for a server with the `resource_timer_is_transient_error` feature (gRFC A88).
   */
  resourceTimeoutMs?: number;
  /** Reconnect backoff. Default 1 s, ×1.6, ±20 % jitter, 120 s cap. */
  backoff?: BackoffOptions;
  /** grpc-js channel options for the connections to xDS servers. */
  channelOptions?: ChannelOptions;
  /** Replaces the grpc-js transport (for tests, or a custom connection). */
  transportFactory?: XdsTransportFactory;
  /**
   * The LB policies the clusters' consumer can run, for Clusters' `load_balancing_policy`
   * (gRFC A52). Omitted: custom (`TypedStruct`) policies are skipped. `xds-client/grpc` passes
   * grpc-js's registry.
   */
  lbPolicies?: LbPolicyRegistry;
  /**
   * Where gRFC A78's metrics go (docs/operations.md). Omitted: the global MeterProvider of
   * `@opentelemetry/api`, if one is registered when the client is made; else none are recorded.
   */
  meterProvider?: MeterProvider;
  /**
   * What the client serves, reported as CSDS's `client_scope` and as the `grpc.target` label
   * of A78's metrics (gRFC A71). Default ''. `xds-client/grpc` sets `xds://<authority>/` for
   * the clients its channels and servers share.
   */
  clientScope?: string;
}

/** The longest delay Node's timers honour: anything longer fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Longer names would make every request of their type exceed a server's message limit. */
export const MAX_RESOURCE_NAME_BYTES = 16 * 1024;

/** Throws XdsError(INVALID_ARGUMENT) naming every bad option. */
export function checkClientOptions(options: unknown): void {
  const errs = new ValidationErrors();
  if (typeof options !== 'object' || options === null) {
    errs.add(`must be an object (got ${describe(options)})`);
  } else {
    const o = options as Record<string, unknown>;
    errs.field('bootstrap', () => {
      const b = o.bootstrap;
      if (b !== undefined && typeof b !== 'string' && (typeof b !== 'object' || b === null)) {
        errs.add(`must be an object or JSON text (got ${describe(b)})`);
      }
    });
    errs.field('resourceTimeoutMs', () => checkDelay(errs, o.resourceTimeoutMs));
    errs.field('backoff', () => checkBackoff(errs, o.backoff));
    errs.field('channelOptions', () => {
      const c = o.channelOptions;
      if (c !== undefined && (typeof c !== 'object' || c === null)) {
        errs.add(`must be an object (got ${describe(c)})`);
      }
    });
    errs.field('transportFactory', () => {
      const f = o.transportFactory;
      if (f !== undefined && typeof f !== 'function') {
        errs.add(`must be a function (got ${describe(f)})`);
      }
    });
    errs.field('meterProvider', () => {
      const m = o.meterProvider as Record<string, unknown> | undefined;
      if (m === undefined) return;
      if (typeof m !== 'object' || m === null) {
        errs.add(`must be an OpenTelemetry MeterProvider (got ${describe(m)})`);
      } else if (typeof m.getMeter !== 'function') {
        errs.add('must be an OpenTelemetry MeterProvider: it has no getMeter(name, version)');
      }
    });
    errs.field('clientScope', () => {
      const c = o.clientScope;
      if (c !== undefined && typeof c !== 'string') {
        errs.add(`must be a string (got ${describe(c)})`);
      }
    });
    errs.field('lbPolicies', () => {
      const r = o.lbPolicies as Record<string, unknown> | undefined;
      if (r === undefined) return;
      if (typeof r !== 'object' || r === null) {
        errs.add(`must be an object (got ${describe(r)})`);
      } else if (typeof r.has !== 'function' || typeof r.configError !== 'function') {
        errs.add('must have has(name) and configError(name, config) methods');
      }
    });
  }
  if (errs.isEmpty) return;
  const details = errs.list();
  throw new XdsError(status.INVALID_ARGUMENT, `XdsClient options: ${formatFieldErrors(details)}`, {
    details,
  });
}

function checkBackoff(errs: ValidationErrors, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null) {
    errs.add(`must be an object (got ${describe(value)})`);
    return;
  }
  const b = value as Record<keyof BackoffOptions, unknown>;
  errs.field('initialMs', () => checkDelay(errs, b.initialMs));
  errs.field('maxMs', () => {
    checkDelay(errs, b.maxMs);
    const initial = typeof b.initialMs === 'number' ? b.initialMs : DEFAULT_BACKOFF.initialMs;
    if (typeof b.maxMs === 'number' && b.maxMs < initial) {
      errs.add(`must be at least initialMs (${initial}; got ${b.maxMs})`);
    }
  });
  errs.field('multiplier', () => {
    const m = b.multiplier;
    if (m !== undefined && !(typeof m === 'number' && Number.isFinite(m) && m >= 1)) {
      errs.add(`must be a finite number of at least 1 (got ${describe(m)})`);
    }
  });
  errs.field('jitter', () => {
    const j = b.jitter;
    if (j !== undefined && !(typeof j === 'number' && j >= 0 && j <= 1)) {
      errs.add(`must be between 0 and 1: 0.2 spreads delays over ±20 % (got ${describe(j)})`);
    }
  });
  errs.field('random', () => {
    if (b.random !== undefined && typeof b.random !== 'function') {
      errs.add(`must be a function returning a number in [0, 1) (got ${describe(b.random)})`);
    }
  });
}

/** A delay in ms: a number greater than 0 that Node's timers can wait for. */
function checkDelay(errs: ValidationErrors, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !(value > 0) || value > MAX_TIMER_MS) {
    errs.add(`must be a number of milliseconds in (0, ${MAX_TIMER_MS}] (got ${describe(value)})`);
  }
}

/**
 * Why a resource name cannot be watched, or undefined if it can. Names go on the wire as UTF-8
 * in every request of their type, so one bad name would spoil every other watch of its type.
 */
export function resourceNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return `resource name must be a string (got ${describe(name)})`;
  const surrogate = LONE_SURROGATE.exec(name);
  if (surrogate) {
    return (
      `resource name ${JSON.stringify(name.slice(0, 64))} has a lone UTF-16 surrogate at ` +
      `index ${surrogate.index}: it cannot be sent as UTF-8`
    );
  }
  const bytes = Buffer.byteLength(name);
  if (bytes > MAX_RESOURCE_NAME_BYTES) {
    return `resource name is ${bytes} bytes long; at most ${MAX_RESOURCE_NAME_BYTES} are allowed`;
  }
  return undefined;
}

/** In a `u` regex a surrogate pair is one code point, so only unpaired halves match. */
const LONE_SURROGATE = /\p{Cs}/u;

function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 64));
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}
