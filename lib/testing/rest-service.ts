// REST-JSON xDS (the protocol document's "REST-JSON polling subscriptions"), served beside the
// gRPC services from the same store: POST /v3/discovery:listeners (:routes, :clusters,
// :endpoints) with a proto3-JSON DiscoveryRequest, answered with the type's current state in
// proto3 JSON, or 304 Not Modified when the request's version_info is already the current one
// (go-control-plane's rule). Requests are recorded in the server's request log with streamId 0.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { messageCodec } from '../codec';
import type { DiscoveryRequest } from '../generated/protos';
import { toMessageBytes } from '../proto-json';
import { toProtoJson } from '../proto-json-writer';
import { recordRequest, type RecordedRequest } from './recorder';
import { sotwEntry } from './resource-wrapper';
import type { StreamHost } from './stream-session';

/** The REST path's last segment for each type (`/v3/discovery:clusters`). */
export const REST_PATHS: Readonly<Record<string, string>> = {
  listeners: 'type.googleapis.com/envoy.config.listener.v3.Listener',
  routes: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
  clusters: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  endpoints: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
};

/** The id REST requests and responses carry in the logs: there is no stream. */
export const REST_STREAM_ID = 0;

const REQUEST_TYPE = 'envoy.service.discovery.v3.DiscoveryRequest';
const RESPONSE_TYPE = 'envoy.service.discovery.v3.DiscoveryResponse';
const requestCodec = messageCodec(REQUEST_TYPE);
const responseCodec = messageCodec(RESPONSE_TYPE);
const MAX_BODY_BYTES = 1024 * 1024;

export class RestService {
  private readonly server: http.Server;

  private constructor(
    private readonly host: StreamHost,
    private readonly requests: RecordedRequest[],
  ) {
    this.server = http.createServer((req, res) => this.handle(req, res));
  }

  /** Listens on 127.0.0.1 (a free port) and resolves with the base URL, `http://127.0.0.1:P`. */
  static async start(
    host: StreamHost,
    requests: RecordedRequest[],
  ): Promise<{ service: RestService; url: string }> {
    const service = new RestService(host, requests);
    await new Promise<void>((resolve) => service.server.listen(0, '127.0.0.1', resolve));
    const { port } = service.server.address() as AddressInfo;
    return { service, url: `http://127.0.0.1:${port}` };
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const typeUrl = REST_PATHS[/^\/v3\/discovery:(\w+)$/.exec(req.url ?? '')?.[1] ?? ''];
    if (req.method !== 'POST' || typeUrl === undefined) {
      reply(res, 404, { message: `no such endpoint: ${req.method} ${req.url}` });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        this.answer(typeUrl, Buffer.concat(chunks).toString('utf8'), res);
      } catch (e) {
        reply(res, 400, { message: e instanceof Error ? e.message : String(e) });
      }
    });
  }

  private answer(typeUrl: string, body: string, res: http.ServerResponse): void {
    const request = requestCodec.decode(toMessageBytes(REQUEST_TYPE, JSON.parse(body)));
    if (request.typeUrl !== '' && request.typeUrl !== typeUrl) {
      reply(res, 400, { message: `type_url ${request.typeUrl} on the path of ${typeUrl}` });
      return;
    }
    this.record(request);
    const version = this.host.store.version(typeUrl);
    if (this.host.isHeld(typeUrl) || request.versionInfo === version) {
      res.writeHead(304).end();
      return;
    }
    const names = new Set(request.resourceNames);
    const selected = this.host.store.select(typeUrl, names.size === 0, names);
    const nonce = this.host.nextNonce();
    const bytes = responseCodec.encode({
      versionInfo: version,
      resources: selected.map((resource) => sotwEntry(typeUrl, resource)),
      canary: false,
      typeUrl,
      nonce,
      controlPlane: null,
    });
    this.host.recordResponse(
      Object.freeze({
        streamId: REST_STREAM_ID,
        typeUrl,
        versionInfo: version,
        nonce,
        resourceNames: Object.freeze(selected.map((r) => r.name)),
        sentAt: Date.now(),
      }),
    );
    reply(res, 200, toProtoJson(RESPONSE_TYPE, bytes));
  }

  private record(request: DiscoveryRequest): void {
    this.requests.push(recordRequest(REST_STREAM_ID, request));
    this.host.notify();
  }
}

function reply(res: http.ServerResponse, code: number, json: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(json));
}
