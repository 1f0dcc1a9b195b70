import type { CallCredentials, ChannelCredentials } from '@grpc/grpc-js';
import { serverKey, type Bootstrap, type XdsServerConfig } from '../../bootstrap';
import type { AdsStreamEvents } from '../ads/ads-stream';
import { Backoff, type BackoffOptions } from '../transport/backoff';
import { callCredentials } from '../credentials/call-credentials';
import { channelCredentials } from '../credentials/channel-credentials';
import { GrpcTransport } from '../transport/grpc-transport';
import { buildNode } from '../transport/node';
import { ServerChannel, type StreamKey } from './server-channel';
import { SotwAdsStream } from '../ads/sotw-stream';
import type { XdsTransport, XdsTransportFactory } from '../transport/transport';
import type { ChannelOptions } from '@grpc/grpc-js';

// Loaded when a server entry asks for them: a client on the default transport (ADS over gRPC,
// state of the world) does not pay for the others at import (decision 0080).
const deltaStream = (): typeof import('../ads/delta-stream') =>
  require('../ads/delta-stream') as typeof import('../ads/delta-stream');
const restTransport = (): typeof import('../transport/rest-transport') =>
  require('../transport/rest-transport') as typeof import('../transport/rest-transport');
const fileTransport = (): typeof import('../transport/file-transport') =>
  require('../transport/file-transport') as typeof import('../transport/file-transport');

export interface ChannelPoolOptions {
  readonly backoff?: BackoffOptions | undefined;
  readonly channelOptions?: ChannelOptions | undefined;
  readonly transportFactory?: XdsTransportFactory | undefined;
}

/** What a stream closed for want of authorities leaves for its successor. */
interface PastStream {
  readonly backoff: Backoff;
  /** When its next attempt was due (0 if none was waiting). */
  readonly retryAt: number;
}

/**
 * The client's server channels, one per xDS server key whatever the number of authorities
 * using it (one ADS stream per server), and the credentials of every server of the bootstrap.
 */
export class ChannelPool {
  private readonly channels = new Map<string, ServerChannel>();
  /**
   * Per server key: credentials built, and their files read, at construction; the call
   * credentials (A97) once per key, so that every channel to the server shares one token cache.
   */
  private readonly credentials = new Map<
    string,
    { channel: ChannelCredentials; call: CallCredentials | undefined }
  >();
  /** What a channel closed for want of authorities leaves for its successor (see acquire). */
  private readonly pastChannels = new Map<string, Map<StreamKey, PastStream>>();

  constructor(
    private readonly bootstrap: Bootstrap,
    private readonly options: ChannelPoolOptions,
    /** The stream's events, bound to its channel. */
    private readonly eventsFor: (channel: ServerChannel, stream: StreamKey) => AdsStreamEvents,
  ) {
    if (!options.transportFactory) this.buildCredentials();
  }

  /** The bootstrap path of every server, so a bad credentials file is named where it is set. */
  private buildCredentials(): void {
    const servers: [XdsServerConfig, string][] = this.bootstrap.xdsServers.map((server, i) => [
      server,
      `xds_servers[${i}]`,
    ]);
    for (const [name, authority] of this.bootstrap.authorities) {
      authority.xdsServers.forEach((server, i) => {
        servers.push([server, `authorities[${JSON.stringify(name)}].xds_servers[${i}]`]);
      });
    }
    for (const [server, where] of servers) {
      // FILESYSTEM and REST make no gRPC channel: their fields were checked with the bootstrap.
      if (server.apiType === 'FILESYSTEM' || server.apiType === 'REST') continue;
      const key = serverKey(server);
      if (this.credentials.has(key)) continue;
      this.credentials.set(key, {
        channel: channelCredentials(server, where),
        call: callCredentials(server, () => new Backoff(this.options.backoff)),
      });
    }
  }

  all(): Iterable<ServerChannel> {
    return this.channels.values();
  }

  /** The channel to `server`, opened if no authority uses it yet. */
  acquire(server: XdsServerConfig): ServerChannel {
    const key = serverKey(server);
    const open = this.channels.get(key);
    if (open) return open;
    // A server disconnected for want of watches keeps its backoffs when it is needed again:
    // re-watching must never be a way around the reconnect backoff. Its old error is not
    // replayed: new watchers hear of the next attempt, which waits out the backoff.
    const past = this.pastChannels.get(key);
    this.pastChannels.delete(key);
    const transport = this.options.transportFactory?.(server) ?? this.newTransport(server, key);
    // The wire protocol is the server entry's api_type; everything above it is shared.
    const delta = server.apiType === 'AGGREGATED_DELTA_GRPC' || server.apiType === 'DELTA_GRPC';
    const perType = server.apiType === 'GRPC' || server.apiType === 'DELTA_GRPC';
    const Stream = delta ? deltaStream().DeltaAdsStream : SotwAdsStream;
    const node = buildNode(this.bootstrap.node);
    const channel: ServerChannel = new ServerChannel(server, key, transport, perType, (stream) => {
      const before = past?.get(stream);
      const backoff = before?.backoff ?? new Backoff(this.options.backoff);
      return {
        backoff,
        stream: new Stream(
          server,
          transport,
          node,
          backoff,
          this.bootstrap.node.id,
          this.eventsFor(channel, stream),
          before?.retryAt ?? 0,
        ),
      };
    });
    this.channels.set(key, channel);
    return channel;
  }

  /** The transport of the server entry's api_type (docs/transports.md). */
  private newTransport(server: XdsServerConfig, key: string): XdsTransport {
    if (server.apiType === 'FILESYSTEM') return new (fileTransport().FileTransport)(server);
    if (server.apiType === 'REST') return new (restTransport().RestTransport)(server);
    const credentials = this.credentials.get(key);
    return new GrpcTransport(
      server,
      this.options.channelOptions,
      credentials?.channel,
      credentials?.call,
    );
  }

  /** Closes a channel no authority uses any more, keeping its backoff for a successor. */
  release(channel: ServerChannel): void {
    if (channel.inUse || this.channels.get(channel.key) !== channel) return;
    const past = new Map<StreamKey, PastStream>();
    for (const [key, { stream, backoff }] of channel.openStreams) {
      past.set(key, { backoff, retryAt: stream.retryAt });
    }
    this.pastChannels.set(channel.key, past);
    channel.close();
    channel.transport.close();
    this.channels.delete(channel.key);
  }

  closeAll(): void {
    for (const channel of this.channels.values()) {
      channel.close();
      channel.transport.close();
    }
    this.channels.clear();
  }
}
