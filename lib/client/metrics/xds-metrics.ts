// gRFC A78's XdsClient metrics, with A88's cache states, through @opentelemetry/api. The module
// observes the core: counters from its ack/nack/disconnected events, gauges read from its
// server channels and cache when the MeterProvider collects. With no provider (no option, no
// global one registered) nothing here runs: no listener is added, so the core builds no event
// payloads, and @opentelemetry/api is not even loaded.

import type {
  Attributes,
  Counter,
  MeterProvider,
  ObservableGauge,
  ObservableResult,
  ValueType,
} from '@opentelemetry/api';
import type { EventEmitter } from 'eventemitter3';
import { logError } from '../../trace';
import { VERSION } from '../../version';
import { meterProviderFor } from './otel-api';
import type { AckEvent, DisconnectedEvent, NackEvent, XdsClientEvents } from '../core/events';
import type { ResourceState } from '../cache/resource-state';
import { parseResourceName } from '../cache/resource-name';
import type { ServerChannel } from '../core/server-channel';

/** What the metrics read of a client: its events, its scope and its server channels. */
export interface MeteredClient extends EventEmitter<XdsClientEvents> {
  /** CSDS's client scope (the `clientScope` option), the `grpc.target` label. */
  readonly clientScope: string;
}

/** A78's cache states (A88's additions included) of `grpc.xds.cache_state`. */
export type CacheState =
  | 'requested'
  | 'does_not_exist'
  | 'does_not_exist_but_cached'
  | 'acked'
  | 'nacked'
  | 'nacked_but_cached'
  | 'timeout';

/** A client's metrics; `stop()` (at close) detaches them. */
export interface ClientMetrics {
  stop(): void;
}

interface MetricSource {
  readonly client: MeteredClient;
  readonly channels: () => Iterable<ServerChannel>;
  /** Every cache entry of the client (the cache belongs to authorities, not servers). */
  readonly resources: () => Iterable<ResourceState<unknown>>;
}

/** One set of instruments per MeterProvider, shared by the clients metered through it. */
interface Instruments {
  readonly serverFailure: Counter;
  readonly resourceUpdatesValid: Counter;
  readonly resourceUpdatesInvalid: Counter;
  readonly sources: Set<MetricSource>;
}

const instrumentsByProvider = new WeakMap<MeterProvider, Instruments>();

/** ValueType.INT, without loading @opentelemetry/api for its enum. */
const INT = 0 as ValueType;

/**
 * Starts A78's metrics for a client, or returns undefined when there is no provider. A meter
 * that throws costs the metrics, never the client: the failure is logged.
 */
export function startMetrics(
  client: MeteredClient,
  channels: () => Iterable<ServerChannel>,
  resources: () => Iterable<ResourceState<unknown>>,
  option: MeterProvider | undefined,
): ClientMetrics | undefined {
  let instruments: Instruments;
  try {
    const provider = meterProviderFor(option);
    if (provider === undefined) return undefined;
    instruments = instrumentsOf(provider);
  } catch (e) {
    logFailure(e);
    return undefined;
  }
  const source: MetricSource = { client, channels, resources };
  const onAck = guarded((event: AckEvent | NackEvent) => {
    const labels: Attributes = {
      'grpc.target': client.clientScope,
      'grpc.xds.server': event.server,
      'grpc.xds.resource_type': resourceTypeOf(event.typeUrl),
    };
    if (event.validResources > 0) {
      instruments.resourceUpdatesValid.add(event.validResources, labels);
    }
    if (event.invalidResources > 0) {
      instruments.resourceUpdatesInvalid.add(event.invalidResources, labels);
    }
  });
  // The core reports a failed stream before it marks the server failed: a server still marked
  // healthy here is going from healthy to unhealthy (A78), counted once until it recovers.
  const onDisconnected = guarded((event: DisconnectedEvent) => {
    if (event.error === undefined) return;
    for (const channel of channels()) {
      if (channel.config.serverUri !== event.server) continue;
      if (channel.failing) return;
      instruments.serverFailure.add(1, {
        'grpc.target': client.clientScope,
        'grpc.xds.server': event.server,
      });
      return;
    }
  });
  client.on('ack', onAck);
  client.on('nack', onAck);
  client.on('disconnected', onDisconnected);
  instruments.sources.add(source);
  return {
    stop() {
      instruments.sources.delete(source);
      client.off('ack', onAck);
      client.off('nack', onAck);
      client.off('disconnected', onDisconnected);
    },
  };
}

function instrumentsOf(provider: MeterProvider): Instruments {
  const known = instrumentsByProvider.get(provider);
  if (known) return known;
  const meter = provider.getMeter('xds-client', VERSION);
  const sources = new Set<MetricSource>();
  const connected: ObservableGauge = meter.createObservableGauge('grpc.xds_client.connected', {
    description:
      'Whether the xDS client has a working ADS stream to the xDS server: 1 from the stream ' +
      'being created, 0 after a connectivity failure or a stream failing before any response ' +
      '(gRFC A57), 1 again at the next response.',
    unit: '{bool}',
    valueType: INT,
  });
  connected.addCallback(guarded((result: ObservableResult) => observeConnected(sources, result)));
  const resources: ObservableGauge = meter.createObservableGauge('grpc.xds_client.resources', {
    description: 'Number of xDS resources.',
    unit: '{resource}',
    valueType: INT,
  });
  resources.addCallback(guarded((result: ObservableResult) => observeResources(sources, result)));
  const instruments: Instruments = {
    serverFailure: meter.createCounter('grpc.xds_client.server_failure', {
      description:
        'A counter of xDS servers going from healthy to unhealthy: a connectivity failure, ' +
        'or an ADS stream failing without seeing a response message (gRFC A57).',
      unit: '{failure}',
      valueType: INT,
    }),
    resourceUpdatesValid: meter.createCounter('grpc.xds_client.resource_updates_valid', {
      description:
        'A counter of resources received that were considered valid, unchanged ones included.',
      unit: '{resource}',
      valueType: INT,
    }),
    resourceUpdatesInvalid: meter.createCounter('grpc.xds_client.resource_updates_invalid', {
      description: 'A counter of resources received that were considered invalid.',
      unit: '{resource}',
      valueType: INT,
    }),
    sources,
  };
  instrumentsByProvider.set(provider, instruments);
  return instruments;
}

function observeConnected(sources: ReadonlySet<MetricSource>, result: ObservableResult): void {
  for (const { client, channels } of sources) {
    for (const channel of channels()) {
      result.observe(channel.failing ? 0 : 1, {
        'grpc.target': client.clientScope,
        'grpc.xds.server': channel.config.serverUri,
      });
    }
  }
}

/** Counted from the cache at collection time: the hot path maintains nothing for this gauge. */
function observeResources(sources: ReadonlySet<MetricSource>, result: ObservableResult): void {
  for (const { client, resources } of sources) {
    const counts = new Map<string, { labels: Attributes; count: number }>();
    for (const state of resources()) {
      const authority = parseResourceName(state.name).authority ?? '#old';
      const type = resourceTypeOf(state.type.typeUrl);
      const cacheState = cacheStateOf(state);
      const key = `${authority}\n${type}\n${cacheState}`;
      const entry = counts.get(key);
      if (entry) entry.count++;
      else {
        const labels: Attributes = {
          'grpc.target': client.clientScope,
          'grpc.xds.authority': authority,
          'grpc.xds.cache_state': cacheState,
          'grpc.xds.resource_type': type,
        };
        counts.set(key, { labels, count: 1 });
      }
    }
    for (const { labels, count } of counts.values()) result.observe(count, labels);
  }
}

/** A88's cache state of an entry: its CSDS status, and whether a good version is still kept. */
export function cacheStateOf(state: ResourceState<unknown>): CacheState {
  const cached = state.resource !== undefined;
  switch (state.status) {
    case 'REQUESTED':
      return 'requested';
    case 'ACKED':
      // A53: a deletion ignored keeps the resource; A88 reports it as does-not-exist-but-cached.
      return state.deletionIgnored ? 'does_not_exist_but_cached' : 'acked';
    case 'NACKED':
      return cached ? 'nacked_but_cached' : 'nacked';
    case 'DOES_NOT_EXIST':
      return cached ? 'does_not_exist_but_cached' : 'does_not_exist';
    case 'TIMEOUT':
      return 'timeout';
  }
}

/** A78's resource type label: the message's full name, `envoy.config.listener.v3.Listener`. */
function resourceTypeOf(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf('/') + 1);
}

/** Wraps a metrics callback so that a meter that throws is logged once and goes no further. */
function guarded<A>(run: (arg: A) => void): (arg: A) => void {
  let logged = false;
  return (arg) => {
    try {
      run(arg);
    } catch (e) {
      if (logged) return;
      logged = true;
      logFailure(e);
    }
  };
}

function logFailure(e: unknown): void {
  logError(`xds-client: metrics: ${e instanceof Error ? e.stack : String(e)}`);
}
