// api_type REST: REST-JSON polling (the protocol document's "REST-JSON polling subscriptions").
// The transport presents polling to the core as an ADS call, as the file transport does: the
// core's request for a type says which names to poll for; each poll POSTs a proto3-JSON
// DiscoveryRequest to `<server_uri>/v3/discovery:<listeners|routes|clusters|endpoints>` carrying
// the last accepted version, every `refresh_delay`; a 200 is handed over as a DiscoveryResponse,
// a 304 means unchanged. ACKs move the version the next poll carries; a NACK's error_detail goes
// out once, on the next poll, with the last accepted version (the document's NACK over REST).
// A poll that fails (connection, HTTP error) ends the call, so the core reconnects with backoff
// and tells watchers as it would of a stream (A57). Docs: docs/transports.md.
import * as http from 'node:http';
import * as https from 'node:https';
import { status } from '@grpc/grpc-js';
import type { XdsServerConfig } from '../../bootstrap';
import { DEFAULT_REFRESH_DELAY_MS } from '../../bootstrap';
import { messageCodec } from '../../codec';
import type { DiscoveryRequest, Node } from '../../generated/protos';
import { tracer } from '../../trace';
import type { AdsCall, AdsCallHandlers, XdsTransport } from './transport';

const trace = tracer('xds_rest');
const REQUEST_TYPE = 'envoy.service.discovery.v3.DiscoveryRequest';
const RESPONSE_TYPE = 'envoy.service.discovery.v3.DiscoveryResponse';
const requestCodec = messageCodec(REQUEST_TYPE);
const responseCodec = messageCodec(RESPONSE_TYPE);
/** A poll that takes longer than this has failed. */
const POLL_TIMEOUT_MS = 30_000;

/** The REST path of each xDS type. */
const PATHS: Readonly<Record<string, string>> = {
  'type.googleapis.com/envoy.config.listener.v3.Listener': 'listeners',
  'type.googleapis.com/envoy.config.route.v3.RouteConfiguration': 'routes',
  'type.googleapis.com/envoy.config.cluster.v3.Cluster': 'clusters',
  'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment': 'endpoints',
};

export class RestTransport implements XdsTransport {
  private readonly calls = new Set<RestCall>();
  /** Keep-alive connections, closed with the transport. */
  private readonly agent: http.Agent;

  constructor(private readonly server: XdsServerConfig) {
    const secure = server.serverUri.startsWith('https:');
    this.agent = secure
      ? new https.Agent({ keepAlive: true })
      : new http.Agent({ keepAlive: true });
  }

  startAdsCall(handlers: AdsCallHandlers): AdsCall {
    const call = new RestCall(this.server, this.agent, handlers, () => this.calls.delete(call));
    this.calls.add(call);
    return call;
  }

  close(): void {
    for (const call of [...this.calls]) call.cancel();
    this.agent.destroy();
  }
}

/** Per type: what to poll for and what the core last accepted. */
interface TypePoll {
  readonly typeUrl: string;
  readonly url: string;
  names: readonly string[];
  /** The version the next poll carries: the last one the core accepted ('' for none). */
  version: string;
  /** After a change of names, the next poll carries no version: the answer must be full. */
  full: boolean;
  /** A NACK's error_detail, for the next poll only. */
  errorDetail: DiscoveryRequest['errorDetail'];
  /** The version of the last answer handed to the core, and the last one it rejected. */
  delivered: string | undefined;
  rejected: string | undefined;
  nonce: string;
  timer: NodeJS.Timeout | undefined;
  inFlight: http.ClientRequest | undefined;
  again: boolean;
}

class RestCall implements AdsCall {
  private readonly polls = new Map<string, TypePoll>();
  private node: Node | null = null;
  private ended = false;
  private nonces = 0;

  constructor(
    private readonly server: XdsServerConfig,
    private readonly agent: http.Agent,
    private readonly handlers: AdsCallHandlers,
    private readonly onCancel: () => void,
  ) {}

  write(bytes: Uint8Array, onWritten: () => void): void {
    if (this.ended) return;
    const request = requestCodec.decode(bytes);
    // The node comes on the call's first request; REST has no stream, so every poll carries it.
    if (request.node) this.node = request.node;
    queueMicrotask(() => {
      if (!this.ended) onWritten();
    });
    const path = PATHS[request.typeUrl];
    if (path === undefined) return; // no REST endpoint for the type: its timers decide
    let poll = this.polls.get(request.typeUrl);
    const names = [...request.resourceNames];
    if (!poll) {
      poll = {
        typeUrl: request.typeUrl,
        url: `${this.server.serverUri.replace(/\/+$/, '')}/v3/discovery:${path}`,
        names,
        version: '',
        full: true,
        errorDetail: null,
        delivered: undefined,
        rejected: undefined,
        nonce: '',
        timer: undefined,
        inFlight: undefined,
        again: false,
      };
      this.polls.set(request.typeUrl, poll);
      this.poll(poll);
      return;
    }
    if (request.responseNonce !== '') {
      // An ACK or a NACK of the last answer: what the next poll says.
      poll.version = request.versionInfo;
      if (request.errorDetail) {
        poll.errorDetail = request.errorDetail;
        poll.rejected = poll.delivered;
      }
    }
    if (names.join('\n') !== poll.names.join('\n')) {
      poll.names = names;
      poll.full = true;
      this.poll(poll);
    }
  }

  cancel(): void {
    if (this.ended) return;
    this.ended = true;
    for (const poll of this.polls.values()) {
      clearTimeout(poll.timer);
      poll.inFlight?.destroy();
    }
    this.polls.clear();
    this.onCancel();
  }

  /** POSTs the type's request now (one at a time per type), then again after refresh_delay. */
  private poll(poll: TypePoll): void {
    if (this.ended) return;
    if (poll.inFlight) {
      poll.again = true;
      return;
    }
    clearTimeout(poll.timer);
    poll.timer = undefined;
    const body = this.requestJson(poll);
    const url = new URL(poll.url);
    const send = url.protocol === 'https:' ? https.request : http.request;
    const request = send(url, {
      method: 'POST',
      agent: this.agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      timeout: POLL_TIMEOUT_MS,
    });
    poll.inFlight = request;
    request.on('timeout', () => request.destroy(new Error(`no answer in ${POLL_TIMEOUT_MS} ms`)));
    request.on('error', (e) => this.fail(poll, e.message));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (e) => this.fail(poll, e.message));
      response.on('end', () => this.answered(poll, response.statusCode ?? 0, chunks));
    });
    request.end(body);
  }

  private requestJson(poll: TypePoll): string {
    const request: DiscoveryRequest = {
      versionInfo: poll.full ? '' : poll.version,
      node: this.node,
      resourceNames: poll.names,
      resourceLocators: [],
      typeUrl: poll.typeUrl,
      responseNonce: poll.nonce,
      errorDetail: poll.errorDetail,
    } as unknown as DiscoveryRequest;
    poll.errorDetail = null; // a NACK is sent once
    const { toProtoJson } =
      require('../../proto-json-writer') as typeof import('../../proto-json-writer');
    return JSON.stringify(toProtoJson(REQUEST_TYPE, requestCodec.encode(request)));
  }

  private answered(poll: TypePoll, code: number, chunks: readonly Buffer[]): void {
    if (this.ended || poll.inFlight === undefined) return;
    poll.inFlight = undefined;
    if (code === 304) {
      if (trace.enabled) trace.log(`${poll.url}: 304 not modified`);
    } else if (code === 200) {
      poll.full = false;
      this.deliver(poll, Buffer.concat(chunks).toString('utf8'));
    } else {
      const text = Buffer.concat(chunks).toString('utf8').slice(0, 200);
      this.fail(poll, `HTTP ${code}${text ? `: ${text}` : ''}`);
      return;
    }
    if (this.ended) return;
    if (poll.again) {
      poll.again = false;
      this.poll(poll);
      return;
    }
    poll.timer = setTimeout(
      () => this.poll(poll),
      this.server.refreshDelayMs ?? DEFAULT_REFRESH_DELAY_MS,
    );
  }

  private deliver(poll: TypePoll, text: string): void {
    let bytes: Uint8Array;
    try {
      const { toMessageBytes } = require('../../proto-json') as typeof import('../../proto-json');
      const response = responseCodec.decode(toMessageBytes(RESPONSE_TYPE, JSON.parse(text)));
      if (response.typeUrl !== '' && response.typeUrl !== poll.typeUrl) {
        throw new Error(`type_url: expected ${poll.typeUrl}, got ${response.typeUrl}`);
      }
      // The server answers the last accepted version with the one just rejected for as long as
      // it has nothing newer: that is no news, and NACKing it on every poll would be noise.
      if (poll.rejected !== undefined && response.versionInfo === poll.rejected) return;
      poll.delivered = response.versionInfo;
      // The nonce is optional over REST (one request at a time): the core needs one to answer.
      poll.nonce = response.nonce || `rest-${++this.nonces}`;
      bytes = responseCodec.encode({ ...response, typeUrl: poll.typeUrl, nonce: poll.nonce });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      this.handlers.onRejected?.(poll.typeUrl, `${poll.url}: ${message}`);
      return;
    }
    this.handlers.onMessage(bytes);
  }

  /** A failed poll ends the call: the core reconnects with backoff, as for a stream. */
  private fail(poll: TypePoll, reason: string): void {
    if (this.ended) return;
    const details = `REST ${poll.url}: ${reason}`;
    this.cancel();
    this.handlers.onEnd(status.UNAVAILABLE, details);
  }
}
