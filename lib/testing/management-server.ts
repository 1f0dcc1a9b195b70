// A real gRPC ADS management server for tests (ours and users'): state-of-the-world and
// incremental (delta) ADS from one resource store, with a request log to assert on and hooks for the faults a test needs (held
// responses, ended streams, crafted responses), as grpc-go's e2e server offers around
// go-control-plane. On the same port, a LoadReportingService that records load reports.
import { Server, ServerCredentials, status, type ServiceDefinition } from '@grpc/grpc-js';
import { bidiMethod } from './grpc-method';
import type { Any, DiscoveryRequest, DiscoveryResponse } from '../generated/protos';
import { AdsSession, type AdsCall } from './ads-session';
import { buildBootstrap, type BootstrapJson, type BootstrapOptions } from './bootstrap-json';
import { toMessageBytes } from './json-message';
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
  recordRequest,
  requestProbe,
  requestTimeoutMessage,
  type RecordedDeltaRequest,
  type RecordedRequest,
  type RecordedResponse,
  type WaitForRequestOptions,
  type WaitOptions,
} from './recorder';
import {
  ResourceStore,
  nameOfBytes,
  type ResourceInput,
  type ResourceJson,
} from './resource-store';
import { sotwEntry } from './resource-wrapper';
import { resolveTypeUrl, shortTypeName, type ResourceTypeName } from './resource-types';

export interface ManagementServerOptions {
  /** Default 0: a free port. The server binds 127.0.0.1 only. */
  port?: number;
  /** Protocol events (stale requests, unknown types) for debugging a test. Default: silent. */
  log?: (line: string) => void;
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

/** One resource of a crafted response: raw bytes, or JSON encoded as the message `typeUrl` names. */
export type RawResource =
  { typeUrl: string; value: Uint8Array } | { typeUrl: string; json: ResourceJson };

export interface RawResponse {
  typeUrl: string;
  /** Default: the server's current version of the type ('' for a type it does not serve). */
  versionInfo?: string;
  /** Default: a fresh nonce per stream. */
  nonce?: string;
  resources: readonly RawResource[];
}

export const ADS_METHOD_PATH =
  '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';

const ADS_METHOD = bidiMethod(
  ADS_METHOD_PATH,
  'envoy.service.discovery.v3.DiscoveryRequest',
  'envoy.service.discovery.v3.DiscoveryResponse',
);
const ADS_SERVICE: ServiceDefinition = {
  StreamAggregatedResources: ADS_METHOD,
  DeltaAggregatedResources: DELTA_ADS_METHOD,
};
const HOST = '127.0.0.1';
/** How long close() lets clients see their streams' status before resetting connections. */
const CLOSE_GRACE_MS = 500;

export class ManagementServer {
  private readonly store = new ResourceStore();
  private readonly sessions = new Map<number, AdsSession>();
  private readonly requestLog: RecordedRequest[] = [];
  private readonly responseLog: RecordedResponse[] = [];
  private readonly waiters = new Waiters();
  private readonly lrs = new LrsService(this.waiters);
  private readonly delta = new DeltaService({
    store: this.store,
    isHeld: (typeUrl) => this.isHeld(typeUrl),
    nextNonce: () => this.nextNonce(),
    streamOpened: () => this.streamOpened(),
    isClosing: () => this.closing !== undefined,
    log: (line) => this.log(line),
    recordResponse: (response) => this.responseLog.push(response),
    notify: () => this.waiters.notify(),
  });
  private readonly held = new Set<string>();
  /** With `heldAll`, the types released one by one since. */
  private readonly releasedFromAll = new Set<string>();
  private heldAll = false;
  private fault: StreamFault['endBeforeResponseWith'] | undefined;
  private opened = 0;
  private nonces = 0;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly grpcServer: Server,
    /** '127.0.0.1:PORT' */
    readonly address: string,
    private readonly log: (line: string) => void,
  ) {}

  /** Starts a server on 127.0.0.1 with insecure credentials. */
  static async start(options: ManagementServerOptions = {}): Promise<ManagementServer> {
    const grpcServer = new Server();
    const port = await new Promise<number>((resolve, reject) => {
      grpcServer.bindAsync(
        `${HOST}:${options.port ?? 0}`,
        ServerCredentials.createInsecure(),
        (error, bound) => (error ? reject(error) : resolve(bound)),
      );
    });
    const server = new ManagementServer(grpcServer, `${HOST}:${port}`, options.log ?? (() => {}));
    grpcServer.addService(ADS_SERVICE, {
      StreamAggregatedResources: (call: AdsCall) => server.onStream(call),
      DeltaAggregatedResources: (call: DeltaCall) => server.delta.onStream(call),
    });
    grpcServer.addService(LRS_SERVICE, {
      StreamLoadStats: (call: Parameters<LrsService['onStream']>[0]) => server.lrs.onStream(call),
    });
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
    for (const session of this.sessions.values()) {
      if (session.isSubscribed(typeUrl)) this.respond(session, typeUrl, only ?? 'all');
    }
  }

  /** Removes one resource; same version bump and push (the SotW way to delete). */
  removeResource(type: ResourceTypeName, name: string): void {
    const typeUrl = resolveTypeUrl(type);
    this.store.remove(typeUrl, name);
    this.push(typeUrl, name);
  }

  /** A bootstrap object (snake_case, as in a file) pointing at this server, insecure creds. */
  bootstrap(options: BootstrapOptions = {}): BootstrapJson {
    return buildBootstrap(this.address, options);
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
    return this.requestLog;
  }

  /** Every response sent, SotW and delta, in order, crafted ones included. */
  get responses(): readonly RecordedResponse[] {
    return this.responseLog;
  }

  /** ADS streams open now (a stream the server has ended no longer counts). */
  get streamCount(): number {
    let open = this.delta.streamCount;
    for (const session of this.sessions.values()) if (session.isOpen) open++;
    return open;
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
    return this.waiters.wait(requestProbe(this.requestLog, predicate, after), options, (ms) =>
      requestTimeoutMessage(this.requestLog, after, ms),
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
    for (const session of this.sessions.values()) {
      for (const [typeUrl, subscription] of session.subscriptions) {
        if (subscription.due) this.respond(session, typeUrl);
      }
    }
    this.delta.release();
  }

  /** Ends every open stream with this status (a grpc-js `status` number). */
  endStreams(code: status, details = `ended by the test with status ${code}`): void {
    for (const session of this.sessions.values()) session.end(code, details);
    this.delta.endStreams(code, details);
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
    const targets = this.rawTargets(streamId);
    const resources: Any[] = [];
    const names: string[] = [];
    response.resources.forEach((resource, index) => {
      if ('value' in resource) {
        resources.push({ type_url: resource.typeUrl, value: resource.value });
        names.push(nameOfBytes(resource.typeUrl, resource.value));
        return;
      }
      const path = `resources[${index}].json`;
      const value = toMessageBytes(resource.typeUrl, resource.json, { path });
      resources.push({ type_url: resource.typeUrl, value });
      names.push(nameOfBytes(resource.typeUrl, value));
    });
    const versionInfo = response.versionInfo ?? this.store.version(response.typeUrl);
    return targets.map((session) => {
      const nonce = response.nonce ?? this.nextNonce();
      this.write(session, { typeUrl: response.typeUrl, versionInfo, nonce, resources }, names);
      return nonce;
    });
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
  private streamOpened() {
    // The fault is the one set when the stream opened: a test that clears it after
    // waitForStreams(n) has resolved still sees stream n fail.
    const fault = this.fault && {
      code: this.fault.code,
      details: this.fault.details ?? `stream fault (status ${this.fault.code})`,
    };
    return { id: ++this.opened, fault };
  }

  private onStream(call: AdsCall): void {
    const { id, fault } = this.streamOpened();
    const session = new AdsSession(id, call, fault);
    if (this.closing) {
      session.end(status.UNAVAILABLE, 'management server closed');
      return;
    }
    this.sessions.set(session.id, session);
    const detach = () => {
      session.markClosed();
      this.sessions.delete(session.id);
    };
    call.on('data', (request: DiscoveryRequest) => this.onRequest(session, request));
    // A client that half-closes is done: end with OK, as go-control-plane does.
    call.on('end', () => session.end(status.OK, ''));
    call.on('finish', detach);
    call.on('cancelled', detach);
    call.on('close', detach);
    this.waiters.notify();
  }

  private onRequest(session: AdsSession, request: DiscoveryRequest): void {
    this.requestLog.push(recordRequest(session.id, request));
    const first = session.requestCount++ === 0;
    if (first && session.fault) {
      session.end(session.fault.code, session.fault.details);
    } else if (session.isOpen && !this.closing) {
      this.answer(session, request);
    }
    this.waiters.notify();
  }

  private answer(session: AdsSession, request: DiscoveryRequest): void {
    const type = shortTypeName(request.typeUrl);
    if (!this.store.serves(request.typeUrl)) {
      this.log(`stream ${session.id}: ${type}: unknown type, not answered`);
      return;
    }
    const verdict = session.applyRequest(request);
    if (verdict === 'stale') {
      this.log(`stream ${session.id}: ${type}: stale nonce ${request.responseNonce}, ignored`);
    } else if (verdict === 'changed') {
      this.respond(session, request.typeUrl);
    }
  }

  /**
   * Sends the type's current version of the resources the stream asked for; `heartbeats`
   * sends those TTL'd resources as heartbeats.
   */
  private respond(
    session: AdsSession,
    typeUrl: string,
    heartbeats?: ReadonlySet<string> | 'all',
  ): void {
    const subscription = session.subscriptions.get(typeUrl);
    if (!subscription) return;
    // Nothing subscribed (the client dropped its last name): nothing to say.
    if (!subscription.wildcard && subscription.names.size === 0) {
      subscription.due = false;
      return;
    }
    if (this.isHeld(typeUrl)) {
      subscription.due = true;
      return;
    }
    const selected = this.store.select(typeUrl, subscription.wildcard, subscription.names);
    const beats = selected
      .filter((r) => r.ttlMs !== undefined && heartbeats !== undefined)
      .filter((r) => heartbeats === 'all' || heartbeats!.has(r.name))
      .map((r) => r.name);
    const response = {
      typeUrl,
      versionInfo: this.store.version(typeUrl),
      nonce: this.nextNonce(),
      resources: selected.map((r) => sotwEntry(typeUrl, r, beats.includes(r.name))),
    };
    this.write(
      session,
      response,
      selected.map((resource) => resource.name),
      beats,
    );
  }

  /** `only`: the one resource that changed (delta streams need look at nothing else). */
  private push(typeUrl: string, only?: string): void {
    for (const session of this.sessions.values()) {
      if (session.isSubscribed(typeUrl)) this.respond(session, typeUrl);
    }
    this.delta.push(typeUrl, only);
  }

  private write(
    session: AdsSession,
    response: Pick<DiscoveryResponse, 'typeUrl' | 'versionInfo' | 'nonce' | 'resources'>,
    names: readonly string[],
    heartbeats: readonly string[] = [],
  ): void {
    const sent = session.send({ ...response, canary: false, controlPlane: null });
    if (!sent) return;
    this.responseLog.push(
      Object.freeze({
        streamId: session.id,
        typeUrl: response.typeUrl,
        versionInfo: response.versionInfo,
        nonce: response.nonce,
        resourceNames: Object.freeze([...names]),
        ...(heartbeats.length > 0 && { heartbeats: Object.freeze([...heartbeats]) }),
        sentAt: Date.now(),
      }),
    );
  }

  private isHeld(typeUrl: string): boolean {
    return this.heldAll ? !this.releasedFromAll.has(typeUrl) : this.held.has(typeUrl);
  }

  private nextNonce(): string {
    return String(++this.nonces);
  }

  private rawTargets(streamId: number | undefined): AdsSession[] {
    const open = [...this.sessions.values()].filter((session) => session.isOpen);
    const targets = streamId === undefined ? open : open.filter((s) => s.id === streamId);
    if (targets.length === 0) {
      const ids = open.map((s) => s.id).join(', ') || 'none';
      const which = streamId === undefined ? 'no stream is open' : `stream ${streamId} is not open`;
      throw new Error(`sendRaw: ${which} (open streams: ${ids})`);
    }
    return targets;
  }

  private async shutdown(): Promise<void> {
    this.endStreams(status.UNAVAILABLE, 'management server closed');
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
