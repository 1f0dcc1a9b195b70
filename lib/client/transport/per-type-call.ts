// The per-type gRPC transports (api_type GRPC and DELTA_GRPC): the protocol document's "Basic
// xDS" and "Incremental xDS", a separate stream per resource type on the service of that type.
// The core runs one AdsStream per type on these api_types (server-channel.ts), so each type's
// stream fails, backs off and resumes on its own; each AdsStream's call is a PerTypeCall, which
// opens its type's stream on the type's first request.
import { messageCodec } from '../../codec';
import { logError } from '../../trace';
import type { AdsCall, AdsCallHandlers } from './transport';

const TYPE_URL_PREFIX = 'type.googleapis.com/';

/** Per type URL: the service, its SotW method and its incremental method. */
const PER_TYPE_METHODS: ReadonlyMap<string, readonly [string, string, string]> = new Map([
  [
    `${TYPE_URL_PREFIX}envoy.config.listener.v3.Listener`,
    ['envoy.service.listener.v3.ListenerDiscoveryService', 'StreamListeners', 'DeltaListeners'],
  ],
  [
    `${TYPE_URL_PREFIX}envoy.config.route.v3.RouteConfiguration`,
    ['envoy.service.route.v3.RouteDiscoveryService', 'StreamRoutes', 'DeltaRoutes'],
  ],
  [
    `${TYPE_URL_PREFIX}envoy.config.cluster.v3.Cluster`,
    ['envoy.service.cluster.v3.ClusterDiscoveryService', 'StreamClusters', 'DeltaClusters'],
  ],
  [
    `${TYPE_URL_PREFIX}envoy.config.endpoint.v3.ClusterLoadAssignment`,
    ['envoy.service.endpoint.v3.EndpointDiscoveryService', 'StreamEndpoints', 'DeltaEndpoints'],
  ],
]);

/** The method path of a type's per-type stream; undefined for a type with no service. */
export function perTypeMethod(typeUrl: string, delta: boolean): string | undefined {
  const entry = PER_TYPE_METHODS.get(typeUrl);
  return entry && `/${entry[0]}/${delta ? entry[2] : entry[1]}`;
}

const sotwRequestCodec = messageCodec('envoy.service.discovery.v3.DiscoveryRequest');
const deltaRequestCodec = messageCodec('envoy.service.discovery.v3.DeltaDiscoveryRequest');

/** Opens one bidi stream of the channel on a method. */
export type OpenStream = (method: string, handlers: AdsCallHandlers) => AdsCall;

/**
 * The call of one type's AdsStream: its first request names the type, and so the service and
 * method of the stream, which opens then. Every request of the call is of that type.
 */
export class PerTypeCall implements AdsCall {
  private stream: AdsCall | undefined;
  private typeUrl: string | undefined;
  private cancelled = false;

  constructor(
    private readonly handlers: AdsCallHandlers,
    private readonly open: OpenStream,
    private readonly delta: boolean,
    private readonly serverUri: string,
  ) {}

  write(bytes: Uint8Array, onWritten: () => void): void {
    if (this.cancelled) return;
    if (this.stream) {
      this.stream.write(bytes, onWritten);
      return;
    }
    if (this.typeUrl !== undefined) {
      onWritten(); // a type with no per-type service: see below
      return;
    }
    const codec = this.delta ? deltaRequestCodec : sotwRequestCodec;
    this.typeUrl = (codec.decode(bytes) as { typeUrl: string }).typeUrl;
    const method = perTypeMethod(this.typeUrl, this.delta);
    if (method === undefined) {
      // No per-type service exists for it: its resources are left to the does-not-exist timer.
      logError(
        `xds-client: ${this.serverUri}: no per-type xDS service for ${this.typeUrl}; ` +
          'use an ADS api_type for it',
      );
      onWritten();
      return;
    }
    this.stream = this.open(method, {
      onMessage: (message) => this.handlers.onMessage(message),
      onEnd: (code, details) => this.handlers.onEnd(code, `${method}: ${details}`),
    });
    this.stream.write(bytes, onWritten);
  }

  cancel(): void {
    this.cancelled = true;
    this.stream?.cancel();
  }
}
