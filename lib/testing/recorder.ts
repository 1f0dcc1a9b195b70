// What the server saw and sent, as plain frozen objects, and promises that wait on it with a
// deadline: tests await the request they expect instead of sleeping.
import type {
  DeltaDiscoveryRequest,
  DiscoveryRequest,
  Node,
  Struct,
  Value,
} from '../generated/protos';
import { shortTypeName } from './resource-types';

/** The node of a stream's first request (clients send it only there). */
export interface RecordedNode {
  readonly id: string;
  readonly cluster: string;
  readonly userAgentName: string;
  readonly userAgentVersion: string;
  readonly clientFeatures: readonly string[];
  readonly locality?: { readonly region: string; readonly zone: string; readonly subZone: string };
  /** google.protobuf.Struct as plain JSON. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/**
 * A stream as it arrived (ADS, per-type or LRS): its id, its method path and the metadata
 * (request headers) the client sent with it, such as `authorization` from call credentials.
 */
export interface RecordedStream {
  /** The `streamId` its requests (or, on LRS, its reports) are recorded with. */
  readonly id: number;
  /** `/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources`, … */
  readonly method: string;
  /**
   * The headers, by lower-case name; a header sent more than once has its values joined with
   * ", ". Binary (`-bin`) headers are base64.
   */
  readonly metadata: Readonly<Record<string, string>>;
}

/** What a server call's metadata says, as RecordedStream.metadata. */
export function recordMetadata(metadata: {
  toJSON(): Record<string, (string | Buffer)[]>;
}): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [key, values] of Object.entries(metadata.toJSON())) {
    out[key] = values.map((v) => (typeof v === 'string' ? v : v.toString('base64'))).join(', ');
  }
  return Object.freeze(out);
}

export interface RecordedRequest {
  /** 1, 2, ... in the order streams were opened. */
  readonly streamId: number;
  readonly typeUrl: string;
  readonly versionInfo: string;
  readonly resourceNames: readonly string[];
  readonly responseNonce: string;
  /** Present on a NACK only. */
  readonly errorDetail?: { readonly code: number; readonly message: string };
  readonly node?: RecordedNode | undefined;
  /** `Date.now()` when it arrived. */
  readonly receivedAt: number;
}

/** A DeltaDiscoveryRequest received on a DeltaAggregatedResources stream. */
export interface RecordedDeltaRequest {
  /** 1, 2, ... in the order streams (SotW and delta alike) were opened. */
  readonly streamId: number;
  readonly typeUrl: string;
  readonly resourceNamesSubscribe: readonly string[];
  readonly resourceNamesUnsubscribe: readonly string[];
  readonly initialResourceVersions: Readonly<Record<string, string>>;
  readonly responseNonce: string;
  /** Present on a NACK only. */
  readonly errorDetail?: { readonly code: number; readonly message: string };
  readonly node?: RecordedNode | undefined;
  readonly receivedAt: number;
}

export interface RecordedResponse {
  readonly streamId: number;
  readonly typeUrl: string;
  /** SotW: version_info. Delta: system_version_info. */
  readonly versionInfo: string;
  readonly nonce: string;
  /** The resources' names ('' where a crafted resource's name could not be read). */
  readonly resourceNames: readonly string[];
  /** Delta responses only: removed_resources. */
  readonly removedResources?: readonly string[];
  /** The names sent as heartbeats (a `Resource` without a body), when there are any. */
  readonly heartbeats?: readonly string[];
  readonly sentAt: number;
}

export interface WaitOptions {
  /** Default 5000. */
  timeoutMs?: number;
}

export interface WaitForRequestOptions extends WaitOptions {
  /** Consider only requests at this index of `requests` or later (`server.requests.length`). */
  after?: number;
}

const DEFAULT_TIMEOUT_MS = 5000;
/** How many recent requests a timeout error lists: enough context, not a wall of text. */
const REQUESTS_IN_ERRORS = 8;

export function recordRequest(streamId: number, request: DiscoveryRequest): RecordedRequest {
  const recorded: {
    -readonly [K in keyof RecordedRequest]: RecordedRequest[K];
  } = {
    streamId,
    typeUrl: request.typeUrl,
    versionInfo: request.versionInfo,
    resourceNames: Object.freeze([...request.resourceNames]),
    responseNonce: request.responseNonce,
    receivedAt: Date.now(),
    ...errorAndNode(request),
  };
  return Object.freeze(recorded);
}

export function recordDeltaRequest(
  streamId: number,
  request: DeltaDiscoveryRequest,
): RecordedDeltaRequest {
  const recorded: {
    -readonly [K in keyof RecordedDeltaRequest]: RecordedDeltaRequest[K];
  } = {
    streamId,
    typeUrl: request.typeUrl,
    resourceNamesSubscribe: Object.freeze([...request.resourceNamesSubscribe]),
    resourceNamesUnsubscribe: Object.freeze([...request.resourceNamesUnsubscribe]),
    initialResourceVersions: Object.freeze({ ...request.initialResourceVersions }),
    responseNonce: request.responseNonce,
    receivedAt: Date.now(),
    ...errorAndNode(request),
  };
  return Object.freeze(recorded);
}

/** The NACK's error and the node, each only when the request has it. */
function errorAndNode(request: Pick<DiscoveryRequest, 'errorDetail' | 'node'>): {
  errorDetail?: { readonly code: number; readonly message: string };
  node?: RecordedNode;
} {
  const { errorDetail, node } = request;
  return {
    ...(errorDetail && {
      errorDetail: Object.freeze({ code: errorDetail.code, message: errorDetail.message }),
    }),
    ...(node && { node: recordNode(node) }),
  };
}

export function recordNode(node: Node): RecordedNode {
  const recorded: { -readonly [K in keyof RecordedNode]: RecordedNode[K] } = {
    id: node.id,
    cluster: node.cluster,
    userAgentName: node.userAgentName,
    userAgentVersion: node.userAgentVersion ?? '',
    clientFeatures: Object.freeze([...node.clientFeatures]),
  };
  if (node.locality) {
    const { region, zone, subZone } = node.locality;
    recorded.locality = Object.freeze({ region, zone, subZone });
  }
  if (node.metadata) recorded.metadata = structToJson(node.metadata);
  return Object.freeze(recorded);
}

function structToJson(struct: Struct): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(struct.fields)) out[key] = valueToJson(value);
  return out;
}

function valueToJson(value: Value): unknown {
  if (value.structValue) return structToJson(value.structValue);
  if (value.listValue) return value.listValue.values.map(valueToJson);
  return value.stringValue ?? value.numberValue ?? value.boolValue ?? null;
}

/** One line per request, for error messages. */
export function describeRequest(
  request: RecordedRequest | RecordedDeltaRequest,
  index: number,
): string {
  if ('resourceNamesSubscribe' in request) return describeDeltaRequest(request, index);
  const nack = request.errorDetail ? ` NACK(${request.errorDetail.message})` : '';
  return (
    `#${index} stream ${request.streamId} ${shortTypeName(request.typeUrl)} ` +
    `version=${JSON.stringify(request.versionInfo)} nonce=${JSON.stringify(request.responseNonce)} ` +
    `names=${JSON.stringify(request.resourceNames)}${nack}`
  );
}

function describeDeltaRequest(request: RecordedDeltaRequest, index: number): string {
  const nack = request.errorDetail ? ` NACK(${request.errorDetail.message})` : '';
  return (
    `#${index} stream ${request.streamId} ${shortTypeName(request.typeUrl)} delta ` +
    `nonce=${JSON.stringify(request.responseNonce)} ` +
    `subscribe=${JSON.stringify(request.resourceNamesSubscribe)} ` +
    `unsubscribe=${JSON.stringify(request.resourceNamesUnsubscribe)} ` +
    `initial=${JSON.stringify(request.initialResourceVersions)}${nack}`
  );
}

interface Pending {
  /** Re-checks the condition; true when the waiter is done. */
  readonly poll: () => boolean;
  readonly fail: (error: Error) => void;
}

/**
 * Condition waiters, re-checked whenever something is recorded. Every wait has a deadline, and
 * close() rejects what is left so a test never hangs on a server that is gone.
 */
export class Waiters {
  private readonly pending = new Set<Pending>();
  private closedWith: Error | undefined;

  /**
   * Resolves with the first non-undefined result of `probe`, now or after a later notify().
   * `describeTimeout` builds the rejection text only when it is needed.
   */
  wait<T>(
    probe: () => T | undefined,
    options: WaitOptions,
    describeTimeout: (timeoutMs: number) => string,
  ): Promise<T> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return new Promise<T>((resolve, reject) => {
      // Set once the first poll has missed; read by the closures below.
      const deadline: { timer?: NodeJS.Timeout } = {};
      const entry: Pending = {
        poll: () => {
          let result: T | undefined;
          try {
            result = probe();
          } catch (err) {
            entry.fail(err instanceof Error ? err : new Error(String(err)));
            return true;
          }
          if (result === undefined) return false;
          this.pending.delete(entry);
          clearTimeout(deadline.timer);
          resolve(result);
          return true;
        },
        fail: (error) => {
          this.pending.delete(entry);
          clearTimeout(deadline.timer);
          reject(error);
        },
      };
      if (entry.poll()) return;
      if (this.closedWith) {
        reject(this.closedWith);
        return;
      }
      this.pending.add(entry);
      deadline.timer = setTimeout(
        () => entry.fail(new Error(describeTimeout(timeoutMs))),
        timeoutMs,
      );
    });
  }

  notify(): void {
    for (const entry of [...this.pending]) entry.poll();
  }

  /** Rejects every pending wait, and every later one that is not already satisfied. */
  rejectAll(error: Error): void {
    this.closedWith = error;
    for (const entry of [...this.pending]) entry.fail(error);
  }
}

/** waitForRequest's search: scans forward from where the last poll stopped. */
export function requestProbe<R>(
  requests: readonly R[],
  predicate: (request: R) => boolean,
  after: number,
): () => R | undefined {
  let next = Math.max(0, after);
  return () => {
    for (; next < requests.length; next++) {
      const request = requests[next];
      if (request !== undefined && predicate(request)) return request;
    }
    return undefined;
  };
}

export function requestTimeoutMessage(
  requests: readonly (RecordedRequest | RecordedDeltaRequest)[],
  after: number,
  timeoutMs: number,
  method = 'waitForRequest',
): string {
  const from = Math.max(after, requests.length - REQUESTS_IN_ERRORS);
  const lines = requests.slice(from).map((r, i) => `  ${describeRequest(r, from + i)}`);
  const scope = after > 0 ? ` at index ${after} or later` : '';
  const seen =
    lines.length === 0
      ? `no request${scope} was received`
      : `the last ${lines.length} of ${requests.length} requests:\n${lines.join('\n')}`;
  return `${method}: no matching request${scope} within ${timeoutMs} ms; ${seen}`;
}
