// The three receivers of a workload's responses, as the client process drives them: our
// XdsClient (the built package, dist/), @grpc/grpc-js-xds's XdsClient, and the floor, a bare
// grpc-js stream that decodes each response with plain protobufjs and ACKs it. All three are
// observed the same way: when a response's bytes arrive, when each watcher gets its resource,
// and when the ACK is written.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { MeterProvider } from '@opentelemetry/api';
import type { Event, ResourceKind, SetupCommand } from './protocol';
import type { DiscoveryResponse } from '../lib/generated/protos';

export const ROOT = path.resolve(__dirname, '..');
export const DIST = path.join(ROOT, 'dist', 'lib');

type OursModule = typeof import('../lib/index');
type ClustersModule = typeof import('../lib/clusters/index');
type TransportModule = typeof import('../lib/client/transport/grpc-transport');
type CodecModule = typeof import('../lib/codec');
type XdsTransport = import('../lib/index').XdsTransport;
type AdsCallHandlers = import('../lib/index').AdsCallHandlers;

/** The built package, as users load it. */
export function loadOurs(): OursModule {
  return require(path.join(DIST, 'index.js')) as OursModule;
}

/**
 * A module of the built package that no entry exports, by its path under dist/lib: the
 * bundles' instance (decision 0080), the one the package's entries use, or, in an older build
 * without bundles (`--compare`), its file.
 */
export function builtModule<T>(key: string, dist = DIST): T {
  for (const bundle of ['core.bundle.js', 'extensions.bundle.js', 'tools.bundle.js']) {
    const file = path.join(dist, bundle);
    if (!fs.existsSync(file)) continue;
    const { modules } = require(file) as { modules: Record<string, (() => unknown) | undefined> };
    const load = modules[key];
    if (load) return load() as T;
  }
  return require(path.join(dist, key)) as T;
}

/** watchClusterTree and ClusterResolver: from the package index if exported, else lib/clusters. */
export function loadClusters(): ClustersModule | undefined {
  const ours = loadOurs() as Partial<ClustersModule>;
  if (ours.watchClusterTree && ours.ClusterResolver) return ours as ClustersModule;
  try {
    return builtModule<ClustersModule>('clusters/index.js');
  } catch {
    return undefined;
  }
}

const TYPE_URLS: Readonly<Record<ResourceKind, string>> = {
  cluster: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  endpoint: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
};
/** Where @grpc/grpc-js-xds keeps its XdsClient (the package exports no entry point for it). */
const PEER = '@grpc/grpc-js-xds/build/src';
const ADS_PATH = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';

/**
 * What the client process measures. Times are on this process's clock; the bench measures the
 * end-to-end times on its own, at the server.
 */
export class Probe {
  private receivedAt = 0;
  private ackPending = false;
  private expected = 0;
  private count = 0;
  private failed = false;

  constructor(private readonly send: (event: Event) => void) {}

  expect(deliveries: number): void {
    this.expected = deliveries;
    this.count = 0;
  }

  /** A response's bytes reached the client. */
  received(): void {
    this.receivedAt = performance.now();
    this.ackPending = true;
  }

  /** A request was written: after a response, that is its ACK. */
  written(): void {
    if (!this.ackPending) return;
    this.ackPending = false;
    this.send({ ev: 'acked', processingMs: performance.now() - this.receivedAt });
  }

  /** One watcher got one resource. */
  delivered(): void {
    if (this.expected > 0 && ++this.count === this.expected) this.done();
  }

  /** The floor: the whole response is decoded. */
  decodedAll(): void {
    if (this.expected > 0) this.done();
  }

  error(message: string): void {
    if (this.failed) return;
    this.failed = true;
    this.send({ ev: 'error', message });
  }

  private done(): void {
    this.expected = 0;
    this.send({ ev: 'delivered', processingMs: performance.now() - this.receivedAt });
  }
}

/**
 * A watcher keeps what it was given, as real ones do. Both clients' watchers are this class
 * (no closure per watcher), so 100,000 of them weigh the same whichever client holds them.
 */
export class Watcher {
  value: unknown = undefined;
  constructor(
    readonly name: string,
    readonly probe: Probe,
  ) {}
  protected got(resource: unknown): void {
    this.value = resource;
    this.probe.delivered();
  }
}

/** One receiver, set up with its watches. */
export interface BenchClient {
  /** Every watcher made, grouped by name in the order of `names` (none for the floor). */
  readonly watchers: readonly Watcher[];
  /** Adds watchers to every name (already subscribed, so cached: delivered at once). */
  watchMore(perName: number): void;
  /** Stops it through its own API (the peer has no close(): every watch is cancelled). */
  close(): void;
}

/** What a client is made from: the setup command's fields, and where it reports deliveries. */
export type ClientOptions = Pick<
  SetupCommand,
  'server' | 'nodeId' | 'resource' | 'names' | 'watchersPerName' | 'retain' | 'metered' | 'floor'
> & { readonly probe: Probe };

/**
 * Loads what an implementation needs before the heap baseline is taken, so that a memory figure
 * is the client's and its watchers', not the modules'.
 */
export function preload(impl: 'ours' | 'peer' | 'floor', resource: ResourceKind): void {
  if (impl === 'ours') {
    // The core bundle: every module of the client, the transport included (decision 0080).
    loadOurs();
  } else if (impl === 'peer') {
    require(`${PEER}/xds-client`);
    require(`${PEER}/xds-bootstrap`);
    require(`${PEER}/xds-resource-type/${resource}-resource-type`);
  } else {
    require('@grpc/grpc-js');
    builtModule('codec.js');
  }
}

// ---- ours ----

class OursWatcher extends Watcher {
  onResourceChanged(resource: unknown): void {
    this.got(resource);
  }
  onResourceError(error: Error): void {
    this.probe.error(`ours: ${this.name}: ${error.message}`);
  }
  onAmbientError(): void {}
}

/** Wraps the default grpc-js transport to see response bytes arrive and requests leave. */
class ObservedTransport implements XdsTransport {
  constructor(
    private readonly inner: XdsTransport,
    private readonly probe: Probe,
  ) {}
  startAdsCall(handlers: AdsCallHandlers) {
    const probe = this.probe;
    const call = this.inner.startAdsCall({
      onMessage(bytes) {
        probe.received();
        handlers.onMessage(bytes);
      },
      onEnd: (code, details) => handlers.onEnd(code, details),
    });
    return {
      write(bytes: Uint8Array, onWritten: () => void) {
        call.write(bytes, onWritten);
        probe.written();
      },
      cancel: () => call.cancel(),
    };
  }
  close(): void {
    this.inner.close();
  }
}

export function startOurs(options: ClientOptions): BenchClient {
  const { XdsClient } = loadOurs();
  const { GrpcTransport } = builtModule<TransportModule>('client/transport/grpc-transport.js');
  const client = new XdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: options.server, channel_creds: [{ type: 'insecure' }] }],
      node: { id: options.nodeId },
    },
    transportFactory: (server) => new ObservedTransport(new GrpcTransport(server), options.probe),
    ...(options.metered ? { meterProvider: sdkMeterProvider() } : {}),
  });
  const watch =
    options.resource === 'cluster'
      ? client.watchCluster.bind(client)
      : client.watchEndpoints.bind(client);
  const watchers: Watcher[] = [];
  const watchAll = (perName: number) => {
    for (const name of options.names) {
      for (let w = 0; w < perName; w++) {
        const watcher = new OursWatcher(name, options.probe);
        watchers.push(watcher);
        watch(name, watcher);
      }
    }
  };
  watchAll(options.watchersPerName);
  return { watchers, watchMore: watchAll, close: () => client.close() };
}

/** The OpenTelemetry SDK with a reader that collects only when asked (the bench never asks). */
function sdkMeterProvider(): MeterProvider {
  const sdk = require('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
  class IdleReader extends sdk.MetricReader {
    protected override async onShutdown(): Promise<void> {}
    protected override async onForceFlush(): Promise<void> {}
  }
  return new sdk.MeterProvider({ readers: [new IdleReader()] });
}

// ---- the peer: @grpc/grpc-js-xds ----

/** The parts of @grpc/grpc-js-xds's internal XdsClient the bench uses (it ships no public one). */
interface PeerResourceType {
  startWatch(client: PeerClient, name: string, watcher: PeerWatcher): void;
  cancelWatch(client: PeerClient, name: string, watcher: PeerWatcher): void;
  get(): object;
}
interface PeerTypeModule {
  readonly ClusterResourceType: PeerResourceType;
  readonly EndpointResourceType: PeerResourceType;
}
interface PeerCall {
  prependListener(event: 'data', listener: () => void): void;
  write(...args: unknown[]): boolean;
}
interface PeerAdsCallState {
  readonly call: PeerCall;
  subscribe(type: object, name: object, delaySend?: boolean): void;
  updateNames(type: object): void;
}
interface PeerClient {
  readonly authorityStateMap: Map<string, { client: { adsCallState: PeerAdsCallState | null } }>;
}

class PeerWatcher extends Watcher {
  onGenericResourceChanged(resource: object): void {
    this.got(resource);
  }
  onError(status: { details: string }): void {
    this.probe.error(`peer: ${this.name}: ${status.details}`);
  }
  onResourceDoesNotExist(): void {
    this.probe.error(`peer: ${this.name}: does not exist`);
  }
}

export function startPeer(options: ClientOptions): BenchClient {
  const { XdsClient } = require(`${PEER}/xds-client`) as {
    XdsClient: new (bootstrap: object) => PeerClient;
  };
  const { validateBootstrapConfig } = require(`${PEER}/xds-bootstrap`) as {
    validateBootstrapConfig(json: object): object;
  };
  const type: PeerResourceType =
    options.resource === 'cluster'
      ? (require(`${PEER}/xds-resource-type/cluster-resource-type`) as PeerTypeModule)
          .ClusterResourceType
      : (require(`${PEER}/xds-resource-type/endpoint-resource-type`) as PeerTypeModule)
          .EndpointResourceType;
  const client = new XdsClient(
    validateBootstrapConfig({
      xds_servers: [{ server_uri: options.server, channel_creds: [{ type: 'insecure' }] }],
      // Its bootstrap validation insists on a locality.
      node: { id: options.nodeId, locality: {} },
    }),
  );
  const [first] = options.names;
  if (first === undefined) throw new Error('no names to watch');
  const probe = options.probe;
  const watchers: PeerWatcher[] = [];
  const watchOne = (name: string) => {
    const watcher = new PeerWatcher(name, probe);
    watchers.push(watcher);
    type.startWatch(client, name, watcher);
  };
  const watchAll = (perName: number) => {
    for (const name of options.names) for (let w = 0; w < perName; w++) watchOne(name);
  };
  // The first watch, through the public path, creates the client's ADS stream.
  watchOne(first);
  const callState = client.authorityStateMap.get('old:')?.client.adsCallState;
  if (!callState) throw new Error('peer: no ADS stream after the first watch');
  // Observation only: a listener ahead of the client's own, and a wrapped write.
  callState.call.prependListener('data', () => probe.received());
  const write = callState.call.write.bind(callState.call);
  callState.call.write = (...args: unknown[]) => {
    const result = write(...args);
    probe.written();
    return result;
  };
  // The peer sends a DiscoveryRequest naming every subscribed resource on each new watch:
  // 10,000 watches would be 10,000 requests carrying 50 million names (about 25 s of client and
  // server time, quadratic). The bench lets it queue the names with its own `delaySend` (what
  // it does when a stream restarts) and send them in one request: the state it ends in is the
  // one the 10,000 requests leave, and the timed part, the response, is untouched.
  const subscribe = callState.subscribe;
  callState.subscribe = (t, n) => subscribe.call(callState, t, n, true);
  try {
    for (let w = 1; w < options.watchersPerName; w++) watchOne(first);
    for (const name of options.names.slice(1)) {
      for (let w = 0; w < options.watchersPerName; w++) watchOne(name);
    }
  } finally {
    callState.subscribe = subscribe;
  }
  callState.updateNames(type.get());
  return {
    watchers,
    watchMore: watchAll,
    // No close(): cancelling every watch ends its stream. Each cancel would send a request
    // naming all the names left (quadratic again), so, as for subscribing, the requests are
    // held back while cancelling: the last cancel ends the stream, and nothing else differs.
    close() {
      const updateNames = callState.updateNames;
      callState.updateNames = () => undefined;
      try {
        for (const watcher of watchers.splice(0)) type.cancelWatch(client, watcher.name, watcher);
      } finally {
        callState.updateNames = updateNames;
      }
    },
  };
}

// ---- the floor: grpc-js + plain protobufjs ----

/** The floor's channel takes what ours takes by default (gRPC's own default is 4 MiB). */
export const MAX_RECEIVE_BYTES = 128 * 1024 * 1024;

/**
 * A DiscoveryResponse's version_info (field 1) and nonce (field 5), read from its top-level
 * fields alone: every other field, the resources included, is skipped by its length.
 */
export function versionAndNonce(bytes: Buffer): { versionInfo: string; nonce: string } {
  let versionInfo = '';
  let nonce = '';
  let at = 0;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const byte = bytes[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw new Error('floor: a varint longer than 5 bytes');
  };
  while (at < bytes.length) {
    const key = varint();
    const wire = key & 7;
    if (wire === 0) varint();
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const length = varint();
      const field = key >>> 3;
      if (field === 1) versionInfo = bytes.toString('utf8', at, at + length);
      else if (field === 5) nonce = bytes.toString('utf8', at, at + length);
      at += length;
    } else throw new Error(`floor: wire type ${wire} in a DiscoveryResponse`);
  }
  return { versionInfo, nonce };
}

export function startFloor(options: ClientOptions): BenchClient {
  const grpc = require('@grpc/grpc-js') as typeof import('@grpc/grpc-js');
  const { messageCodec } = builtModule<CodecModule>('codec.js');
  const requestCodec = messageCodec('envoy.service.discovery.v3.DiscoveryRequest');
  const responseCodec = messageCodec('envoy.service.discovery.v3.DiscoveryResponse');
  // The floor is protobufjs's own decoder (the reflection types), not the decoders our codec
  // generates: decision 0060 measures those against it.
  const responseType = responseCodec.type;
  const resourceType = (
    options.resource === 'cluster'
      ? messageCodec('envoy.config.cluster.v3.Cluster')
      : messageCodec('envoy.config.endpoint.v3.ClusterLoadAssignment')
  ).type;
  const typeUrl = TYPE_URLS[options.resource];
  const names = [...options.names];
  const request = (versionInfo: string, responseNonce: string, first: boolean) =>
    Buffer.from(
      requestCodec.encode(
        requestCodec.fromObject({
          versionInfo,
          node: first ? { id: options.nodeId } : null,
          resourceNames: names,
          typeUrl,
          responseNonce,
        }),
      ),
    );
  const channel = new grpc.Client(options.server, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': MAX_RECEIVE_BYTES,
  });
  const identity = (bytes: Buffer) => bytes;
  const call = channel.makeBidiStreamRequest<Buffer, Buffer>(ADS_PATH, identity, identity);
  const probe = options.probe;
  // With `retain`, kept until the next response, as a cache would keep them.
  const cache: { decoded: unknown[] } = { decoded: [] };
  const transport = options.floor === 'transport';
  call.on('data', (bytes: Buffer) => {
    probe.received();
    if (transport) {
      const { versionInfo, nonce } = versionAndNonce(bytes);
      probe.decodedAll();
      call.write(request(versionInfo, nonce, false));
      probe.written();
      return;
    }
    const response = responseType.decode(bytes) as unknown as DiscoveryResponse;
    const out = new Array<unknown>(response.resources.length);
    for (let i = 0; i < out.length; i++) out[i] = resourceType.decode(response.resources[i]!.value);
    if (options.retain) cache.decoded = out;
    probe.decodedAll();
    call.write(request(response.versionInfo, response.nonce, false));
    probe.written();
  });
  let closed = false;
  call.on('error', (error: Error) => closed || probe.error(`floor: ${error.message}`));
  call.write(request('', '', true));
  return {
    watchers: [],
    watchMore: () => undefined,
    close() {
      closed = true;
      cache.decoded = [];
      call.cancel();
      channel.close();
    },
  };
}
