// The per-type gRPC transports (api_type GRPC and DELTA_GRPC): the protocol document's "Basic
// xDS" and "Incremental xDS", a separate stream per resource type on the service of that type.
// The core speaks one ADS call; PerTypeCall presents the per-type streams as one: it routes
// each request to its type's stream (opened on the type's first request), gives every stream
// the node on its first request, and merges the streams' responses. Each stream has its own
// nonces and versions already, since the core keeps them per type.
import { messageCodec } from '../codec';
import type { Node } from '../generated/protos';
import { logError } from '../trace';
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

/** What both request messages have that routing needs. */
interface RoutedRequest {
  typeUrl: string;
  node: Node | null;
}

/** Opens one bidi stream of the channel on a method. */
export type OpenStream = (method: string, handlers: AdsCallHandlers) => AdsCall;

/**
 * One ADS call made of per-type streams. The streams live and die together: when one ends
 * (an error, or the server closing it), the others are cancelled and the core sees the call
 * end with that stream's status, then reconnects every type with its usual backoff. A per-type
 * stream that failed alone would otherwise leave the core's nonces for that type pointing at a
 * stream that is gone, and its A57 connectivity rules are written for one call.
 */
export class PerTypeCall implements AdsCall {
  private readonly streams = new Map<string, AdsCall>();
  private readonly codec: typeof sotwRequestCodec | typeof deltaRequestCodec;
  /** The node of the call's first request: every stream's first request carries it. */
  private node: Node | null = null;
  /** Types with no per-type service, logged once. */
  private readonly unserved = new Set<string>();
  private ended = false;

  constructor(
    private readonly handlers: AdsCallHandlers,
    private readonly open: OpenStream,
    private readonly delta: boolean,
    private readonly serverUri: string,
  ) {
    this.codec = delta ? deltaRequestCodec : sotwRequestCodec;
  }

  write(bytes: Uint8Array, onWritten: () => void): void {
    if (this.ended) return;
    const request = this.codec.decode(bytes) as unknown as RoutedRequest;
    if (request.node) this.node = request.node;
    const stream = this.streams.get(request.typeUrl);
    if (stream) {
      stream.write(bytes, onWritten);
      return;
    }
    const method = perTypeMethod(request.typeUrl, this.delta);
    if (method === undefined) {
      // No per-type service exists for it: its resources are left to the does-not-exist timer.
      if (!this.unserved.has(request.typeUrl)) {
        this.unserved.add(request.typeUrl);
        logError(
          `xds-client: ${this.serverUri}: no per-type xDS service for ${request.typeUrl}; ` +
            'use an ADS api_type for it',
        );
      }
      onWritten();
      return;
    }
    const opened = this.open(method, {
      onMessage: (message) => {
        if (!this.ended) this.handlers.onMessage(message);
      },
      onEnd: (code, details) => this.end(code, `${method}: ${details}`),
    });
    this.streams.set(request.typeUrl, opened);
    let first = bytes;
    if (!request.node && this.node) {
      request.node = this.node;
      first = this.codec.encode(request as never);
    }
    opened.write(first, onWritten);
  }

  cancel(): void {
    this.ended = true;
    for (const stream of this.streams.values()) stream.cancel();
    this.streams.clear();
  }

  private end(code: number, details: string): void {
    if (this.ended) return;
    this.cancel();
    this.handlers.onEnd(code, details);
  }
}
