import * as grpc from '@grpc/grpc-js';
import type { XdsServerConfig } from '../../bootstrap';
import { logError } from '../../trace';
import { callCredentials } from '../credentials/call-credentials';
import { channelCredentials } from '../credentials/channel-credentials';
import { Backoff } from './backoff';
import type { AdsCall, AdsCallHandlers, XdsTransport } from './transport';

/** Loaded for a server whose api_type is per type (GRPC, DELTA_GRPC): ADS needs none of it. */
const perTypeCall = (): typeof import('./per-type-call') =>
  require('./per-type-call') as typeof import('./per-type-call');

const ADS_SERVICE = '/envoy.service.discovery.v3.AggregatedDiscoveryService';
/** The ADS method of each aggregated api_type: SotW or incremental ADS. */
const ADS_METHODS: Partial<Record<XdsServerConfig['apiType'], string>> = {
  AGGREGATED_GRPC: `${ADS_SERVICE}/StreamAggregatedResources`,
  AGGREGATED_DELTA_GRPC: `${ADS_SERVICE}/DeltaAggregatedResources`,
};

/** Keepalive on xDS channels, as every gRPC client sets it: 5 minutes. */
const XDS_KEEPALIVE_MS = 5 * 60 * 1000;

/**
 * The largest response an xDS channel takes by default: 128 MiB. gRPC's default of 4 MiB is far
 * below a large mesh's SotW responses (100,000 clusters are about 35 MB); set
 * `channelOptions['grpc.max_receive_message_length']` for another limit.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 128 * 1024 * 1024;
const MAX_RECEIVE_OPTION = 'grpc.max_receive_message_length';

const identity = (bytes: Buffer): Buffer => bytes;
const toBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** Nothing the client does with a frame may throw into grpc-js's event loop: log it instead. */
function contain(handler: () => void): void {
  try {
    handler();
  } catch (e) {
    logError(
      `xds-client: internal error handling an ADS event: ${e instanceof Error ? e.stack : e}`,
    );
  }
}

/**
 * grpc-js's words for a response over the limit (`Received message larger than max (N vs. M)`),
 * said so that a person knows which knob to turn; undefined for any other status.
 */
function tooLargeDetails(s: grpc.StatusObject): string | undefined {
  if (s.code !== grpc.status.RESOURCE_EXHAUSTED) return undefined;
  const sizes = /larger than max \((\d+) vs\.? (\d+)\)/.exec(s.details);
  if (!sizes) return undefined;
  return (
    `an xDS response of ${sizes[1]} bytes is over the limit of ${sizes[2]} bytes: raise the ` +
    `XdsClient option channelOptions['${MAX_RECEIVE_OPTION}'] (default ${DEFAULT_MAX_RESPONSE_BYTES})`
  );
}

/**
 * The gRPC transports: one grpc-js channel per xDS server, carrying one ADS stream
 * (AGGREGATED_GRPC, AGGREGATED_DELTA_GRPC) or one stream per resource type (GRPC, DELTA_GRPC:
 * per-type-call.ts).
 */
export class GrpcTransport implements XdsTransport {
  private readonly client: grpc.Client;
  /** The ADS method; undefined for the per-type api_types. */
  private readonly method: string | undefined;
  /** Each stream's call options: the server's call_creds (gRFC A97), if any. */
  private readonly callOptions: grpc.CallOptions;

  constructor(
    private readonly server: XdsServerConfig,
    channelOptions: grpc.ChannelOptions = {},
    /** Built from the server's channel_creds when omitted. */
    credentials: grpc.ChannelCredentials = channelCredentials(server),
    /** Built from the server's call_creds when omitted (share one to share its token cache). */
    callCreds: grpc.CallCredentials | undefined = callCredentials(server, () => new Backoff()),
  ) {
    this.method = ADS_METHODS[server.apiType];
    this.callOptions = callCreds ? { credentials: callCreds } : {};
    this.client = new grpc.Client(server.serverUri, credentials, {
      'grpc.keepalive_time_ms': XDS_KEEPALIVE_MS,
      [MAX_RECEIVE_OPTION]: DEFAULT_MAX_RESPONSE_BYTES,
      ...channelOptions,
    });
  }

  startAdsCall(handlers: AdsCallHandlers): AdsCall {
    if (this.method !== undefined) return this.startStream(this.method, handlers);
    const delta = this.server.apiType === 'DELTA_GRPC';
    return new (perTypeCall().PerTypeCall)(
      handlers,
      (method, streamHandlers) => this.startStream(method, streamHandlers),
      delta,
      this.server.serverUri,
    );
  }

  /** One bidi stream of serialized frames on `method`. */
  private startStream(method: string, handlers: AdsCallHandlers): AdsCall {
    const call = this.client.makeBidiStreamRequest<Buffer, Buffer>(
      method,
      identity,
      identity,
      new grpc.Metadata(),
      this.callOptions,
    );
    let ended = false;
    const end = (code: number, details: string) => {
      if (ended) return;
      ended = true;
      this.dropEndedWaiters();
      handlers.onEnd(code, details);
    };
    call.on('data', (bytes: Buffer) => {
      if (!ended) contain(() => handlers.onMessage(bytes));
    });
    call.on('status', (s: grpc.StatusObject) =>
      contain(() => end(s.code, tooLargeDetails(s) ?? s.details)),
    );
    // 'error' always comes with a 'status'; listening keeps it from being thrown.
    call.on('error', () => undefined);
    return {
      write: (bytes, onWritten) => {
        if (ended) return;
        // grpc-js calls back once the message is buffered, connected or not; gRFC A57 wants a
        // request that really went out, so wait for the channel to be READY as well.
        call.write(toBuffer(bytes), () => this.whenReady(() => !ended, onWritten));
      },
      cancel: () => {
        ended = true;
        this.dropEndedWaiters();
        call.cancel();
      },
    };
  }

  /** Writes whose "written" callback waits for the channel to be READY (see write). */
  private readonly waitingForReady = new Set<{ live: () => boolean; then: () => void }>();
  private watchingState = false;

  /** Runs `then` once the channel is READY, unless `live()` says the call is gone by then. */
  private whenReady(live: () => boolean, then: () => void): void {
    if (!live()) return;
    const state = this.client.getChannel().getConnectivityState(false);
    if (state === grpc.connectivityState.READY) then();
    else if (state !== grpc.connectivityState.SHUTDOWN) {
      this.waitingForReady.add({ live, then });
      this.watchState();
    }
  }

  /**
   * One connectivity watch for all waiting writes, renewed on every state change. (One per
   * write would pile up while the channel sits in TRANSIENT_FAILURE, where no change comes.)
   */
  private watchState(): void {
    if (this.watchingState || this.waitingForReady.size === 0) return;
    const channel = this.client.getChannel();
    const state = channel.getConnectivityState(false);
    if (state === grpc.connectivityState.SHUTDOWN) {
      this.waitingForReady.clear();
      return;
    }
    this.watchingState = true;
    channel.watchConnectivityState(state, Infinity, () => {
      this.watchingState = false;
      const ready = channel.getConnectivityState(false) === grpc.connectivityState.READY;
      for (const waiter of [...this.waitingForReady]) {
        if (!waiter.live()) this.waitingForReady.delete(waiter);
        else if (ready) {
          this.waitingForReady.delete(waiter);
          waiter.then();
        }
      }
      this.watchState();
    });
  }

  /** Forgets the waiting writes of calls that are over (called when a call ends). */
  private dropEndedWaiters(): void {
    for (const waiter of this.waitingForReady) {
      if (!waiter.live()) this.waitingForReady.delete(waiter);
    }
  }

  close(): void {
    this.client.close();
  }
}
