// gRFC A94's subchannel metrics for the subchannels cluster_impl creates: connection attempts
// that succeed or fail, disconnections with their reason, and open connections, labelled with
// the channel's target and, when named, the cluster and the endpoint's locality. Several
// wrappers (and, through grpc-js's subchannel pool, several policies) may hold one connection:
// each label set counts a connection once, however many wrappers share it (decision 0067).
import type { TLSSocket } from 'node:tls';
import type { ClientHttp2Session } from 'node:http2';
import { connectivityState, type experimental } from '@grpc/grpc-js';
import type { Attributes, MeterProvider } from '@opentelemetry/api';
import { CloseReason, SUBCHANNEL_SHUTDOWN, UNKNOWN_REASON } from './disconnect-reason';
import { localityLabel } from './labels';
import type { OptionalLabel } from './options';
import { subchannelInstruments, type SubchannelInstruments } from './subchannel-instruments';

type SubchannelInterface = experimental.SubchannelInterface;
type RealSubchannel = ReturnType<SubchannelInterface['getRealSubchannel']>;

/** What a channel's LB tree needs to record A94's metrics (the resolver hands it down). */
export interface SubchannelMetricsConfig {
  /** A66's canonical target of the channel. */
  readonly target: string;
  readonly meterProvider: MeterProvider;
  readonly optionalLabels: ReadonlySet<OptionalLabel>;
}

/** Where a subchannel's endpoint belongs. */
export interface SubchannelPlace {
  readonly cluster: string;
  /** Undefined for an endpoint with no locality (logical DNS): the empty locality. */
  readonly locality:
    { readonly region: string; readonly zone: string; readonly subZone: string } | undefined;
}

/** grpc-js's Subchannel fields read here (it has no public view of them). */
interface SubchannelInternals {
  readonly transport?: { readonly session?: ClientHttp2Session | null } | null;
  readonly refcount?: number;
}

/** The watches of each connection (keyed by its channelz ref, the same through any wrapper). */
const watching = new WeakMap<object, Map<string, ConnectionWatch>>();

/**
 * Counts `subchannel`'s connections under `place`'s labels until the returned release is
 * called (once, when the wrapper that asked is destroyed).
 */
export function watchSubchannel(
  subchannel: SubchannelInterface,
  config: SubchannelMetricsConfig,
  place: SubchannelPlace,
): () => void {
  const labels: Attributes = { 'grpc.target': config.target };
  if (config.optionalLabels.has('grpc.lb.backend_service')) {
    labels['grpc.lb.backend_service'] = place.cluster;
  }
  if (config.optionalLabels.has('grpc.lb.locality')) {
    labels['grpc.lb.locality'] = localityLabel(place.locality);
  }
  const key = JSON.stringify(labels);
  const ref = subchannel.getChannelzRef() as object;
  let byLabels = watching.get(ref);
  if (!byLabels) watching.set(ref, (byLabels = new Map()));
  let watch = byLabels.get(key);
  if (!watch) {
    const instruments = subchannelInstruments(config.meterProvider);
    const forget = () => {
      byLabels.delete(key);
      if (byLabels.size === 0) watching.delete(ref);
    };
    watch = new ConnectionWatch(subchannel.getRealSubchannel(), labels, instruments, forget);
    byLabels.set(key, watch);
  }
  return watch.hold();
}

/** One connection's metrics under one label set. */
class ConnectionWatch {
  private holders = 0;
  /** The labels the open connection was counted with (its security level included). */
  private open: Attributes | undefined;
  /** Set from READY until the connection is read (see opened()). */
  private opening: object | undefined;
  /** Why the open connection closed, read when it does. */
  private reason: CloseReason | undefined;
  private readonly listener: experimental.ConnectivityStateListener;

  constructor(
    private readonly real: RealSubchannel,
    private readonly labels: Attributes,
    private readonly instruments: SubchannelInstruments,
    private readonly forget: () => void,
  ) {
    this.listener = (_subchannel, previous, next) => this.transition(previous, next);
    real.addConnectivityStateListener(this.listener);
    // Already connected for someone else: the connection is open under these labels too.
    if (real.getConnectivityState() === connectivityState.READY) this.opened();
  }

  hold(): () => void {
    this.holders++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.holders === 0) this.stop();
    };
  }

  private transition(previous: connectivityState, next: connectivityState): void {
    if (previous === connectivityState.CONNECTING) {
      // CONNECTING → IDLE: shut down mid-attempt, counted neither way (A94).
      if (next === connectivityState.READY) {
        this.instruments.attemptsSucceeded.add(1, this.labels);
        this.opened();
      } else if (next === connectivityState.TRANSIENT_FAILURE) {
        this.instruments.attemptsFailed.add(1, this.labels);
      }
    } else if (previous === connectivityState.READY) {
      const internals = this.real as unknown as SubchannelInternals;
      this.closed(
        internals.refcount === 0 ? SUBCHANNEL_SHUTDOWN : (this.reason?.read() ?? UNKNOWN_REASON),
      );
    }
  }

  /**
   * Counts the connection open. grpc-js tells listeners of READY before it keeps the new
   * transport, so the connection itself (its security, its reasons for closing) is read a
   * microtask later.
   */
  private opened(): void {
    this.reason = undefined;
    const opening = {};
    this.opening = opening;
    queueMicrotask(() => {
      if (this.opening !== opening) return; // closed within the same tick
      this.opening = undefined;
      const session = (this.real as unknown as SubchannelInternals).transport?.session;
      const secure = (session?.socket as TLSSocket | undefined)?.encrypted === true;
      const open = {
        ...this.labels,
        'grpc.security_level': secure ? 'privacy_and_integrity' : 'none',
      };
      this.open = open;
      this.instruments.openConnections.add(1, open);
      if (session) this.reason = new CloseReason(session);
    });
  }

  private closed(reason: string): void {
    if (!this.open && !this.opening) return;
    this.instruments.disconnections.add(1, { ...this.labels, 'grpc.disconnect_error': reason });
    if (this.open) this.instruments.openConnections.add(-1, this.open);
    this.open = undefined;
    this.opening = undefined;
  }

  /** No wrapper holds the subchannel under these labels: to them, it is shut down. */
  private stop(): void {
    this.real.removeConnectivityStateListener(this.listener);
    this.closed(SUBCHANNEL_SHUTDOWN);
    this.forget();
  }
}
