// A real gRPC ADS management server for tests (ours and users'): state-of-the-world
// (sotw-service.ts) and incremental ADS (delta-service.ts) from one resource store, also on
// the per-type services (per-type-services.ts), with request
// logs to assert on and hooks for the faults a test needs (held responses, ended streams,
// crafted responses), as grpc-go's e2e server offers around go-control-plane. On the same
// port, a LoadReportingService that records load reports.
import {
  Server,
  ServerCredentials,
  status,
  type ServerDuplexStream,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import type { AdsCall } from './ads-session';
import { buildBootstrap, type BootstrapJson, type BootstrapOptions } from './bootstrap-json';
import {
  LRS_SERVICE,
  LrsService,
  reportProbe,
  reportTimeoutMessage,
  type LoadReportingSettings,
  type RecordedLoadReport,
  type WaitForLoadReportOptions,
} from './lrs-service';
import {
  DELTA_ADS_METHOD,
  DeltaService,
  type DeltaCall,
  type RawDeltaResponse,
} from './delta-service';
import {
  Waiters,
  recordMetadata,
  requestProbe,
  requestTimeoutMessage,
  type RecordedDeltaRequest,
  type RecordedRequest,
  type RecordedResponse,
  type RecordedStream,
  type WaitForRequestOptions,
  type WaitOptions,
} from './recorder';
import { ADS_METHOD, SotwService, type RawResponse } from './sotw-service';
import { PER_TYPE_SERVICES, perTypeDefinition } from './per-type-services';
import { RestService } from './rest-service';
import { ResourceStore, type ResourceInput } from './resource-store';
import { resolveTypeUrl, type ResourceTypeName } from './resource-types';
import type { StreamHost } from './stream-session';

export interface ManagementServerOptions {
  /** Default 0: a free port. The server binds 127.0.0.1 only. */
  port?: number;
  /** Protocol events (stale requests, unknown types) for debugging a test. Default: silent. */
  log?: (line: string) => void;
  /** TLS (with `clientCa`, mTLS) instead of plaintext. */
  tls?: ManagementServerTls;
}

/** PEM texts, e.g. from `TestCertificateAuthority` (the certificate needs a SAN for 127.0.0.1). */
export interface ManagementServerTls {
  readonly certificate: string;
  readonly privateKey: string;
  /** CA certificates that clients' certificates are verified against; clients must have one. */
  readonly clientCa?: string;
}

/** How the server serves resources it is given. */
export interface SetResourceOptions {
  /**
   * A TTL (ms): the resources go in a `Resource` wrapper with this `ttl`, in SotW and delta
   * alike, and clients drop them unless refreshed (setResource again, or sendHeartbeats).
   */
  ttlMs?: number;
}

export interface StreamFault {
  /** End every new stream with this status right after its first request, before any response. */
  endBeforeResponseWith?: { code: status; details?: string };
}

const ADS_SERVICE: ServiceDefinition = {
  StreamAggregatedResources: ADS_METHOD,
  DeltaAggregatedResources: DELTA_ADS_METHOD,
};
const HOST = '127.0.0.1';
const MAX_REQUEST_BYTES = 128 * 1024 * 1024;
/** How long close() lets clients see their streams' status before resetting connections. */
const CLOSE_GRACE_MS = 500;

export class ManagementServer {
  private readonly store = new ResourceStore();
  private readonly responseLog: RecordedResponse[] = [];
  private readonly streamLog: RecordedStream[] = [];
  private readonly waiters = new Waiters();
  private readonly lrs = new LrsService(this.waiters);
  /** What both ADS services share: the store, holds, nonces, stream ids, the response log. */
  private readonly host: StreamHost = {
    store: this.store,
    isHeld: (typeUrl) => this.isHeld(typeUrl),
    nextNonce: () => this.nextNonce(),
    streamOpened: (call) => this.streamOpened(call),
    isClosing: () => this.closing !== undefined,
    log: (line) => this.log(line),
    recordResponse: (response) => this.responseLog.push(response),
    notify: () => this.waiters.notify(),
  };
  private readonly sotw = new SotwService(this.host);
  private readonly delta = new DeltaService(this.host);
  private readonly held = new Set<string>();
  /** With `heldAll`, the types released one by one since. */
  private readonly releasedFromAll = new Set<string>();
  private heldAll = false;
  private fault: StreamFault['endBeforeResponseWith'] | undefined;
  private opened = 0;
  private nonces = 0;
  private closing: Promise<void> | undefined;

  private rest: RestService | undefined;
  /** The REST-JSON endpoints' base URL (`http://127.0.0.1:PORT`), for `api_type: REST`. */
  restUrl = '';

  private constructor(
    private readonly grpcServer: Server,
    /** '127.0.0.1:PORT' */
    readonly address: string,
    private readonly log: (line: string) => void,
  ) {}

  /** Starts a server on 127.0.0.1, plaintext unless `options.tls`. */
  static async start(options: ManagementServerOptions = {}): Promise<ManagementServer> {
    // A request subscribing to 100,000 clusters names them all (about 7 MB): the server takes
    // what the client's xDS channel takes (128 MiB), not grpc-js's 4 MiB default.
    const grpcServer = new Server({ 'grpc.max_receive_message_length': MAX_REQUEST_BYTES });
    const tls = options.tls;
    const credentials = tls
      ? ServerCredentials.createSsl(
          tls.clientCa === undefined ? null : Buffer.from(tls.clientCa),
          [{ cert_chain: Buffer.from(tls.certificate), private_key: Buffer.from(tls.privateKey) }],
          tls.clientCa !== undefined,
        )
      : ServerCredentials.createInsecure();
    const port = await new Promise<number>((resolve, reject) => {
      grpcServer.bindAsync(`${HOST}:${options.port ?? 0}`, credentials, (error, bound) =>
        error ? reject(error) : resolve(bound),
      );
    });
    const server = new ManagementServer(grpcServer, `${HOST}:${port}`, options.log ?? (() => {}));
    grpcServer.addService(ADS_SERVICE, {
      StreamAggregatedResources: (call: AdsCall) => server.sotw.onStream(call),
      DeltaAggregatedResources: (call: DeltaCall) => server.delta.onStream(call),
    });
    // The per-type services: one stream per type, served from the same store.
    for (const entry of PER_TYPE_SERVICES) {
      grpcServer.addService(perTypeDefinition(entry), {
        [entry.sotwMethod]: (call: AdsCall) => server.sotw.onStream(call, entry.typeUrl),
        [entry.deltaMethod]: (call: DeltaCall) => server.delta.onStream(call, entry.typeUrl),
      });
    }
    grpcServer.addService(LRS_SERVICE, {
      StreamLoadStats: (call: Parameters<LrsService['onStream']>[0]) => server.lrs.onStream(call),
    });
    // REST-JSON polling, from the same store, on a port of its own (HTTP/1.1).
    const rest = await RestService.start(server.host, server.sotw.requests);
    server.rest = rest.service;
    server.restUrl = rest.url;
    return server;
  }

  // ---- resources ----

  /**
   * Replaces every resource of the type, bumps its version and pushes it to subscribers (delta
   * streams get only the resources whose bytes changed, and the names removed).
   */
  setResources(
    type: ResourceTypeName,
    resources: readonly ResourceInput[],
    options: SetResourceOptions = {},
  ): void {
    const typeUrl = resolveTypeUrl(type);
    this.store.replace(typeUrl, resources, checkTtl(options.ttlMs));
    this.push(typeUrl);
  }

  /** Adds or replaces one resource (by name); same version bump and push. */
  setResource(
    type: ResourceTypeName,
    resource: ResourceInput,
    options: SetResourceOptions = {},
  ): void {
    const typeUrl = resolveTypeUrl(type);
    const name = this.store.upsert(typeUrl, resource, checkTtl(options.ttlMs));
    this.push(typeUrl, name);
  }

  /**
   * Sends heartbeats (a `Resource` with name, version and TTL, no body) for the type's TTL'd
   * resources, or those of `names`: to delta streams for what each holds at the current
   * version; to SotW streams as the type's usual response with those resources as heartbeats.
   */
  sendHeartbeats(type: ResourceTypeName, names?: readonly string[]): void {
    const typeUrl = resolveTypeUrl(type);
    const only = names && new Set(names);
    this.delta.sendHeartbeats(typeUrl, only);
    this.sotw.sendHeartbeats(typeUrl, only);
  }

  /** Removes one resource; same version bump and push (the SotW way to delete). */
  removeResource(type: ResourceTypeName, name: string): void {
    const typeUrl = resolveTypeUrl(type);
    this.store.remove(typeUrl, name);
    this.push(typeUrl, name);
  }

  /** A bootstrap object (snake_case, as in a file) pointing at this server, insecure creds. */
  bootstrap(options: BootstrapOptions = {}): BootstrapJson {
    // REST polls the HTTP endpoints, on their own port.
    return buildBootstrap(options.apiType === 'REST' ? this.restUrl : this.address, options);
  }

  // ---- what happened ----

  /** Every DeltaDiscoveryRequest received on DeltaAggregatedResources streams, in order. */
  get deltaRequests(): readonly RecordedDeltaRequest[] {
    return this.delta.requests;
  }

  /** The first delta request, already received or future, that matches. */
  waitForDeltaRequest(
    predicate: (request: RecordedDeltaRequest) => boolean,
    options: WaitForRequestOptions = {},
  ): Promise<RecordedDeltaRequest> {
    const after = options.after ?? 0;
    const log = this.delta.requests;
    return this.waiters.wait(requestProbe(log, predicate, after), options, (ms) =>
      requestTimeoutMessage(log, after, ms, 'waitForDeltaRequest'),
    );
  }

  /** Every DiscoveryRequest received on SotW streams, in order. */
  get requests(): readonly RecordedRequest[] {
    return this.sotw.requests;
  }

  /** Every response sent, SotW and delta, in order, crafted ones included. */
  get responses(): readonly RecordedResponse[] {
    return this.responseLog;
  }

  /** ADS streams open now (a stream the server has ended no longer counts). */
  get streamCount(): number {
    return this.sotw.streamCount + this.delta.streamCount;
  }

  /**
   * Every ADS stream opened (SotW and delta, ADS and per-type), in order, with the metadata it
   * arrived with: `streams[id - 1]` is stream `id`.
   */
  get streams(): readonly RecordedStream[] {
    return this.streamLog;
  }

  /** The first ADS stream, already opened or future, that matches. */
  waitForStream(
    predicate: (stream: RecordedStream) => boolean,
    options: WaitOptions = {},
  ): Promise<RecordedStream> {
    const log = this.streamLog;
    return this.waiters.wait(
      () => log.find(predicate),
      options,
      (ms) => `waitForStream: none of the ${log.length} streams opened matched within ${ms} ms`,
    );
  }

  /** ADS streams (SotW and delta) ever opened (stream ids run 1..streamsOpened). */
  get streamsOpened(): number {
    return this.opened;
  }

  /** The first request, already received or future, that matches. */
  waitForRequest(
    predicate: (request: RecordedRequest) => boolean,
    options: WaitForRequestOptions = {},
  ): Promise<RecordedRequest> {
    const after = options.after ?? 0;
    const log = this.sotw.requests;
    return this.waiters.wait(requestProbe(log, predicate, after), options, (ms) =>
      requestTimeoutMessage(log, after, ms),
    );
  }

  /** Until `streamsOpened >= count`. */
  waitForStreams(count: number, options: WaitOptions = {}): Promise<number> {
    return this.waiters.wait(
      () => (this.opened >= count ? this.opened : undefined),
      options,
      (ms) => `waitForStreams: ${this.opened} of ${count} streams opened within ${ms} ms`,
    );
  }

  // ---- load reporting (LRS) ----

  /**
   * What LRS clients are asked to report: `{ clusters }` or `{ sendAllClusters: true }`, every
   * `intervalMs` (default: every cluster, every 1000 ms). Sent to every open LRS stream now,
   * and to each new one in answer to its first request.
   */
  setLoadReporting(settings: LoadReportingSettings): void {
    this.lrs.set(settings);
  }

  /** Every LoadStatsRequest received on the LRS service, in order. */
  get loadReports(): readonly RecordedLoadReport[] {
    return this.lrs.reports;
  }

  /** Every LRS stream opened, in order, with the metadata it arrived with. */
  get loadReportingStreams(): readonly RecordedStream[] {
    return this.lrs.streams;
  }

  /** LRS streams open now. */
  get loadReportingStreamCount(): number {
    return this.lrs.streamCount;
  }

  /** LRS streams ever opened (their ids run 1..loadReportingStreamsOpened). */
  get loadReportingStreamsOpened(): number {
    return this.lrs.streamsOpened;
  }

  /**
   * The first load report, already received or future, that matches. Each report is offered to
   * `predicate` once, in order, so a predicate may add up counts across reports.
   */
  waitForLoadReport(
    predicate: (report: RecordedLoadReport) => boolean,
    options: WaitForLoadReportOptions = {},
  ): Promise<RecordedLoadReport> {
    const after = options.after ?? 0;
    return this.waiters.wait(reportProbe(this.lrs.reports, predicate, after), options, (ms) =>
      reportTimeoutMessage(this.lrs.reports, after, ms),
    );
  }

  /** Ends every open LRS stream with this status (a grpc-js `status` number). */
  endLoadReportingStreams(code: status, details = `ended by the test with status ${code}`): void {
    this.lrs.endStreams(code, details);
  }

  // ---- faults ----

  /** Answer nothing for the type (default: all types) until released; requests are still logged. */
  holdResponses(type: ResourceTypeName | 'all' = 'all'): void {
    if (type === 'all') {
      this.heldAll = true;
      this.releasedFromAll.clear();
      return;
    }
    const typeUrl = resolveTypeUrl(type);
    this.held.add(typeUrl);
    this.releasedFromAll.delete(typeUrl);
  }

  /** Stops holding the type (default: every type) and sends each stream what it is owed. */
  releaseResponses(type?: ResourceTypeName | 'all'): void {
    if (type === undefined || type === 'all') {
      this.heldAll = false;
      this.held.clear();
      this.releasedFromAll.clear();
    } else {
      const typeUrl = resolveTypeUrl(type);
      this.held.delete(typeUrl);
      if (this.heldAll) this.releasedFromAll.add(typeUrl);
    }
    this.sotw.release();
    this.delta.release();
  }

  /** Ends every open stream with this status (a grpc-js `status` number). */
  endStreams(code: status, details = `ended by the test with status ${code}`): void {
    this.sotw.endStreams(code, details);
    this.delta.endStreams(code, details);
  }

  /**
   * Ends one open stream (SotW or delta, ADS or per-type), by the `streamId` its requests were
   * recorded with; the others go on. Throws if no such stream is open.
   */
  endStream(
    streamId: number,
    code: status,
    details = `ended by the test with status ${code}`,
  ): void {
    if (this.sotw.endStream(streamId, code, details)) return;
    if (this.delta.endStream(streamId, code, details)) return;
    throw new Error(`ManagementServer.endStream: no open stream ${streamId}`);
  }

  /** Applies to streams opened from now on; `undefined` clears it (for later streams). */
  setStreamFault(fault: StreamFault | undefined): void {
    this.fault = fault?.endBeforeResponseWith;
  }

  /**
   * Sends a crafted DiscoveryResponse to every open stream, or to one. Nothing is checked:
   * wrong type URLs, undecodable bytes and duplicate names are the point. Returns the nonces.
   */
  sendRaw(response: RawResponse, streamId?: number): string[] {
    return this.sotw.sendRaw(response, streamId);
  }

  /**
   * Sends a crafted DeltaDiscoveryResponse to every open delta stream, or to one: resources
   * without `resource` are heartbeats; nothing is checked. Returns the nonces.
   */
  sendRawDelta(response: RawDeltaResponse, streamId?: number): string[] {
    return this.delta.sendRaw(response, streamId);
  }

  /**
   * Ends the streams with UNAVAILABLE and shuts down; resolves once the port is free. Idempotent.
   * Pending waitFor* promises are rejected.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  // ---- the protocol ----

  /** A new stream, SotW or delta: its id, and the fault set when it opened. */
  private streamOpened(call: ServerDuplexStream<unknown, unknown>) {
    // The fault is the one set when the stream opened: a test that clears it after
    // waitForStreams(n) has resolved still sees stream n fail.
    const fault = this.fault && {
      code: this.fault.code,
      details: this.fault.details ?? `stream fault (status ${this.fault.code})`,
    };
    const id = ++this.opened;
    this.streamLog.push({ id, method: call.getPath(), metadata: recordMetadata(call.metadata) });
    return { id, fault };
  }

  /** `only`: the one resource that changed (delta streams need look at nothing else). */
  private push(typeUrl: string, only?: string): void {
    this.sotw.push(typeUrl);
    this.delta.push(typeUrl, only);
  }

  private isHeld(typeUrl: string): boolean {
    return this.heldAll ? !this.releasedFromAll.has(typeUrl) : this.held.has(typeUrl);
  }

  private nextNonce(): string {
    return String(++this.nonces);
  }

  private async shutdown(): Promise<void> {
    this.endStreams(status.UNAVAILABLE, 'management server closed');
    await this.rest?.close();
    this.lrs.close();
    this.waiters.rejectAll(new Error('management server closed'));
    await new Promise<void>((resolve) => {
      // A graceful shutdown lets the UNAVAILABLE statuses reach the clients (forceShutdown
      // resets the streams, and clients would see CANCELLED); it normally completes at once,
      // since every stream has just been ended. The forced one is for a peer that lingers.
      const force = setTimeout(() => this.grpcServer.forceShutdown(), CLOSE_GRACE_MS);
      this.grpcServer.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
  }
}

function checkTtl(ttlMs: number | undefined): number | undefined {
  if (ttlMs !== undefined && !(Number.isFinite(ttlMs) && ttlMs > 0)) {
    throw new Error(`ttlMs must be a positive number of milliseconds (got ${ttlMs})`);
  }
  return ttlMs;
}
