// One LoadReportingService stream (envoy.service.load_stats.v3, StreamLoadStats) to one server:
// the node on the first request, then, once the server has said what it wants (the clusters,
// or send_all_clusters, and the interval), one LoadStatsRequest per interval with the load of
// the LoadStore. A stream that ends is started again with backoff; close() leaves nothing
// behind (the call cancelled, the channel closed, every timer cleared; timers never hold the
// process open).

import * as grpc from '@grpc/grpc-js';
import type { NodeConfig, XdsServerConfig } from '../../bootstrap';
import { messageCodec } from '../../codec';
import type { Duration, LoadStatsRequest, LoadStatsResponse } from '../../generated/protos';
import { logError, tracer } from '../../trace';
import { Backoff, type BackoffOptions } from '../transport/backoff';
import { callCredentials } from '../credentials/call-credentials';
import { channelCredentials } from '../credentials/channel-credentials';
import { LoadStore } from './load-store';
import { buildNode } from '../transport/node';

export const LRS_METHOD = '/envoy.service.load_stats.v3.LoadReportingService/StreamLoadStats';

/** Advertised on the LRS stream's node: we honour `send_all_clusters`. */
export const LRS_SEND_ALL_CLUSTERS_FEATURE = 'envoy.lrs.supports_send_all_clusters';

/**
 * The shortest interval we report at: a server asking for less (or for none) gets this. Low
 * enough for tests that want reports quickly, high enough that a zero never makes a busy loop.
 */
export const MIN_LOAD_REPORTING_INTERVAL_MS = 10;

/** Keepalive on xDS channels, as on the ADS channel: 5 minutes. */
const KEEPALIVE_MS = 5 * 60 * 1000;

const requestCodec = messageCodec('envoy.service.load_stats.v3.LoadStatsRequest');
const responseCodec = messageCodec('envoy.service.load_stats.v3.LoadStatsResponse');
const identity = (bytes: Buffer): Buffer => bytes;

const trace = tracer('xds_client_lrs');

export interface LrsStreamOptions {
  /** Default: gRPC's xDS backoff (1 s, ×1.6, ±20 %, 120 s). */
  backoff?: BackoffOptions;
  /** A monotonic clock in ms for the measured load_report_interval; default performance.now. */
  now?: () => number;
}

export class LrsStream {
  readonly store: LoadStore;
  private readonly backoff: Backoff;
  /** The server's call_creds (gRFC A97): the token goes on every LRS stream too. */
  private readonly callOptions: grpc.CallOptions;
  private client: grpc.Client | undefined;
  private call: grpc.ClientDuplexStream<Buffer, Buffer> | undefined;
  private reportTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  /** What the server asked for on this stream; undefined until its first response. */
  private wanted: ReadonlySet<string> | 'all' | undefined;
  private intervalMs = 0;
  private receivedResponse = false;
  private lastReportEmpty = false;
  private closed = false;

  constructor(
    readonly server: XdsServerConfig,
    private readonly node: NodeConfig,
    options: LrsStreamOptions = {},
  ) {
    const now = options.now ?? (() => performance.now());
    this.store = new LoadStore(now);
    this.backoff = new Backoff(options.backoff);
    const credentials = callCredentials(server, () => new Backoff(options.backoff));
    this.callOptions = credentials ? { credentials } : {};
  }

  /** Opens the stream (once; later streams open by themselves after a failure). */
  start(): void {
    if (this.closed || this.call || this.retryTimer) return;
    this.startCall();
  }

  /** Ends the stream for good: the call, the channel and every timer. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopReporting();
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const call = this.call;
    this.call = undefined;
    call?.cancel();
    this.client?.close();
    this.client = undefined;
  }

  private startCall(): void {
    this.retryTimer = undefined;
    if (this.closed) return;
    try {
      this.client ??= new grpc.Client(this.server.serverUri, channelCredentials(this.server), {
        'grpc.keepalive_time_ms': KEEPALIVE_MS,
      });
    } catch (e) {
      logError(
        `xds-client: LRS to ${this.server.serverUri}: ${e instanceof Error ? e.message : e}`,
      );
      this.retryLater();
      return;
    }
    if (trace.enabled) trace.log(`starting LRS stream to ${this.server.serverUri}`);
    const call = this.client.makeBidiStreamRequest<Buffer, Buffer>(
      LRS_METHOD,
      identity,
      identity,
      new grpc.Metadata(),
      this.callOptions,
    );
    this.call = call;
    this.receivedResponse = false;
    this.lastReportEmpty = false;
    this.wanted = undefined;
    call.on('data', (bytes: Buffer) => {
      if (this.call === call) this.onResponse(bytes);
    });
    call.on('status', (s: grpc.StatusObject) => {
      if (this.call === call) this.onEnd(s);
    });
    // 'error' always comes with a 'status'; listening keeps it from being thrown.
    call.on('error', () => undefined);
    const node = buildNode(this.node);
    this.write({
      node: { ...node, clientFeatures: [...node.clientFeatures, LRS_SEND_ALL_CLUSTERS_FEATURE] },
      clusterStats: [],
    });
  }

  private onResponse(bytes: Buffer): void {
    let response: LoadStatsResponse;
    try {
      response = responseCodec.decode(bytes);
    } catch (e) {
      logError(`xds-client: LRS to ${this.server.serverUri}: undecodable response: ${e}`);
      return;
    }
    this.receivedResponse = true;
    this.wanted = response.sendAllClusters ? 'all' : new Set(response.clusters);
    const intervalMs = Math.max(
      MIN_LOAD_REPORTING_INTERVAL_MS,
      msOfDuration(response.loadReportingInterval),
    );
    if (trace.enabled) {
      const which = this.wanted === 'all' ? 'all clusters' : JSON.stringify(response.clusters);
      trace.log(`LRS server wants ${which} every ${intervalMs} ms`);
    }
    // A new interval restarts the timer; new clusters alone take effect at the next report.
    if (intervalMs !== this.intervalMs || !this.reportTimer) {
      this.intervalMs = intervalMs;
      this.stopReporting();
      this.scheduleReport();
    }
  }

  private onEnd(s: grpc.StatusObject): void {
    this.call = undefined;
    this.stopReporting();
    if (this.closed) return;
    if (trace.enabled) trace.log(`LRS stream ended: ${grpc.status[s.code]} ${s.details}`);
    // As on ADS: a stream that was answered was healthy, so the next one starts from the
    // initial backoff.
    if (this.receivedResponse) this.backoff.reset();
    this.retryLater();
  }

  private retryLater(): void {
    if (this.closed) return;
    this.retryTimer = setTimeout(() => this.startCall(), this.backoff.next());
    this.retryTimer.unref();
  }

  private scheduleReport(): void {
    this.reportTimer = setTimeout(() => {
      this.reportTimer = undefined;
      this.sendReport();
      if (this.call && !this.closed) this.scheduleReport();
    }, this.intervalMs);
    this.reportTimer.unref();
  }

  private stopReporting(): void {
    clearTimeout(this.reportTimer);
    this.reportTimer = undefined;
  }

  private sendReport(): void {
    const wanted = this.wanted;
    if (!this.call || wanted === undefined) return;
    const clusterStats = this.store.report(wanted);
    const empty = clusterStats.length === 0;
    // An idle client says so once, then stays quiet until it has load again.
    if (!(empty && this.lastReportEmpty)) this.write({ node: null, clusterStats });
    this.lastReportEmpty = empty;
  }

  private write(request: LoadStatsRequest): void {
    const call = this.call;
    if (!call) return;
    try {
      call.write(Buffer.from(requestCodec.encode(request)));
    } catch (e) {
      logError(`xds-client: LRS to ${this.server.serverUri}: cannot write a report: ${e}`);
    }
  }
}

function msOfDuration(d: Duration | null): number {
  if (!d) return 0;
  const seconds = typeof d.seconds === 'number' ? d.seconds : d.seconds.toNumber();
  return seconds * 1000 + d.nanos / 1e6;
}
