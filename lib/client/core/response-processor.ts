import { status } from '@grpc/grpc-js';
import type { XdsServerConfig } from '../../bootstrap';
import type {
  DecodeContext,
  DecodeResult,
  LbPolicyRegistry,
  ResourceType,
} from '../../resources/resource-type';

import { logError, tracer } from '../../trace';
import type { ResponseVerdict, WireResponse } from '../ads/ads-stream';
import { XdsError, formatFieldErrors } from '../../errors';
import { canonicalName } from '../cache/resource-name';
import type { Deliver, Notification, ResourceState } from '../cache/resource-state';
import { readDeltaResource, readSotwResource, type WireResource } from './wire-resource';

const trace = tracer('xds_client');

/** What the processor needs to know of the client. */
export interface ResponseContext {
  readonly server: XdsServerConfig;
  /** For the decode context: the LB policies the client's user can run. */
  readonly lbPolicies?: LbPolicyRegistry | undefined;
  /** For the decode context: the bootstrap's certificate provider instances. */
  readonly certificateProviders?: DecodeContext['certificateProviders'];
  readonly nodeId: string;
  readonly type: ResourceType<unknown>;
  /** The cache entry subscribed to `name` on this server, if any. */
  lookup(canonicalName: string): ResourceState<unknown> | undefined;
  /** Every cache entry of this type on this server (for SotW deletion). */
  entries(): Iterable<ResourceState<unknown>>;
  /** How many `entries` there are. */
  entryCount(): number;
  /** A resource's TTL ran out (see ResourceState.setTtl). */
  onTtlExpired(state: ResourceState<unknown>): void;
}

/** A response's outcome: the ACK/NACK verdict, and the watcher calls it causes. */
export interface ProcessedResponse {
  /** Its memo: the cache entries this response set or confirmed (valid or unchanged). */
  readonly verdict: ResponseVerdict;
  /** Run after the verdict is recorded: they may start watches that ride on the ACK. */
  readonly notifications: readonly Notification[];
  /** Resources found valid (applied or unchanged) and invalid, for A78's metrics. */
  readonly valid: number;
  readonly invalid: number;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/**
 * A response's copies from this many on go to Node's shared Buffer pool: a response that copies
 * many resources fills each 8 KiB slab itself. The first ones get a buffer each, so a response
 * that copies few (one Listener, a new Cluster among unchanged ones re-sent by state of the
 * world) leaves no slab alive whole for a few hundred bytes. Counted as the copies are made:
 * telling ahead how many a state-of-the-world response will copy took a walk over the cache.
 */
const POOLED_COPIES_FROM = 16;

/**
 * Copies a resource's bytes out of the response buffer, so caching it keeps no response alive:
 * into the shared Buffer pool (`pooled`; small resources then cost no ArrayBuffer each,
 * bench/RESULTS.md: ~6 % of a cold 10,000-cluster delivery), or into a buffer of their own size.
 */
function ownBytes(bytes: Uint8Array, pooled: boolean): Uint8Array {
  // allocUnsafe + set takes the same pool as Buffer.from(bytes), without its generic
  // array-like path (0.65× its time over 10,000 Clusters, decision 0075).
  const copy = pooled ? Buffer.allocUnsafe(bytes.length) : Buffer.allocUnsafeSlow(bytes.length);
  copy.set(bytes);
  return copy;
}

/**
 * Applies one response, SotW or delta, to the cache (gRFC A46: valid resources are applied
 * even when others are not), finds deletions (SotW: missing Listeners and Clusters; delta:
 * `removed_resources`), and returns the verdict and watcher notifications. Each resource is
 * decoded at most once, whatever the number of watchers; one whose bytes are those cached is
 * not decoded at all, and a heartbeat only refreshes its TTL.
 */
export function processResponse(response: WireResponse, ctx: ResponseContext): ProcessedResponse {
  const { type, server } = ctx;
  const delta = response.protocol === 'delta';
  const decodeContext: DecodeContext = {
    server,
    ...(ctx.lbPolicies === undefined ? {} : { lbPolicies: ctx.lbPolicies }),
    ...(ctx.certificateProviders === undefined
      ? {}
      : { certificateProviders: ctx.certificateProviders }),
  };
  const now = new Date();
  const seen = new Set<string>();
  const errors: string[] = [];
  const notifications: Notification[] = [];
  const queue: Deliver = (notification) => notifications.push(notification);
  const applied: ResourceState<unknown>[] = [];
  let copies = 0;
  /** The resource's bytes, copied out of the response (see POOLED_COPIES_FROM). */
  const own = (bytes: Uint8Array) => ownBytes(bytes, ++copies >= POOLED_COPIES_FROM);
  let namelessErrors = 0;
  /** Cache entries the response named (each once): all of them, and SotW deletes nothing. */
  let named = 0;
  /** A TTL or a heartbeat: an unchanged re-send must still refresh it, so no fast path. */
  let timed = false;

  for (let index = 0; index < response.resources.length; index++) {
    try {
      const read =
        response.protocol === 'delta'
          ? readDeltaResource(response.resources[index]!, response.typeUrl)
          : readSotwResource(response.resources[index]!, response.typeUrl);
      if ('error' in read) {
        errors.push(`resource index ${index}: ${read.error}`);
        namelessErrors++;
        continue;
      }
      if (read.ttlMs !== undefined || read.bytes === undefined) timed = true;
      processResource(read, index);
    } catch (e) {
      // A bug (ours, or a user ResourceType's) must cost one resource, not the whole response.
      errors.push(`resource index ${index}: internal error: ${e instanceof Error ? e.message : e}`);
      namelessErrors++;
    }
  }

  function processResource(wire: WireResource, index: number): void {
    const { bytes } = wire;
    // SotW: the response's version applies to each of its resources; delta: each has its own.
    const version = delta ? (wire.resourceVersion ?? '') : response.versionInfo;
    let name = wire.name ?? (bytes && type.peekName?.(bytes));
    let decoded: DecodeResult<unknown> | undefined;
    let owned: Uint8Array | undefined;
    if (name === undefined) {
      owned = own(bytes!);
      decoded = safeDecode(type, owned, decodeContext);
      name = decoded.name;
      if (name === undefined) {
        errors.push(`resource index ${index}: ${formatErrors(decoded)}`);
        namelessErrors++;
        return;
      }
    }
    const canonical = canonicalName(name);
    if (seen.has(canonical)) {
      errors.push(`resource index ${index}: ${type.typeName} "${name}": duplicate resource name`);
      return;
    }
    seen.add(canonical);
    const state = ctx.lookup(canonical);
    if (!state) return; // not subscribed: ignored
    named++;

    if (bytes === undefined) {
      heartbeat(state, wire, name, version, index);
      return;
    }
    if (state.bytes && bytesEqual(state.bytes, bytes)) {
      // Same bytes as the cached version: nobody is told, but the status and version move on.
      if (state.deletionIgnored && trace.enabled) trace.log(`${type.typeName} "${name}" is back`);
      state.markAcked(version, now, wire.resourceVersion);
      state.receivedFrom(server);
      state.setTtl(wire.ttlMs, ctx.onTtlExpired);
      applied.push(state);
      return;
    }
    // Decoded from the cache's own copy, not the response: what an update keeps a view of (a
    // Cluster's metadata, decision 0081) is then in bytes the cache holds anyway.
    owned ??= own(bytes);
    decoded ??= safeDecode(type, owned, decodeContext);
    if (decoded.name !== undefined && decoded.name !== name) {
      // The peeked (or wrapper) name is not the resource's: malformed bytes, apply nothing.
      errors.push(
        `resource index ${index}: ${type.typeName} "${name}": name read from the bytes ` +
          `("${name}") differs from the decoded name ("${decoded.name}")`,
      );
      namelessErrors++;
      return;
    }
    if ('resource' in decoded) {
      state.setResource(decoded.resource, owned, version, now, wire.resourceVersion, queue);
      state.receivedFrom(server);
      state.setTtl(wire.ttlMs, ctx.onTtlExpired);
      applied.push(state);
      return;
    }
    const problem = `${type.typeName} "${name}": ${formatErrors(decoded)}`;
    errors.push(`resource index ${index}: ${problem}`);
    const error = new XdsError(status.INVALID_ARGUMENT, problem, {
      typeUrl: type.typeUrl,
      resourceName: name,
      details: decoded.errors,
      nodeId: ctx.nodeId,
    });
    // Nothing good cached, or A88's fail_on_data_errors: the watchers must drop it.
    const drop = state.resource === undefined || server.failOnDataErrors;
    state.markNacked(error, version, now, drop, queue);
  }

  /**
   * A `Resource` with no body: a heartbeat for the cached resource of the same version, which
   * refreshes its TTL and tells nobody. Anything else without a body is an error.
   */
  function heartbeat(
    state: ResourceState<unknown>,
    wire: WireResource,
    name: string,
    version: string,
    index: number,
  ): void {
    if (state.resource === undefined || wire.resourceVersion !== state.resourceVersion) {
      const cached =
        state.resource === undefined
          ? 'nothing is cached'
          : `the cached version is "${state.resourceVersion ?? ''}"`;
      errors.push(
        `resource index ${index}: ${type.typeName} "${name}": resource: field not present, ` +
          `and not a heartbeat: version "${wire.resourceVersion ?? ''}", but ${cached}`,
      );
      return;
    }
    if (!delta) state.markAcked(version, now);
    state.setTtl(wire.ttlMs, ctx.onTtlExpired);
  }

  if (response.protocol === 'delta') {
    removeResources(response.removed, ctx, seen, errors, notifications);
  } else if (type.allResourcesRequiredInSotW && namelessErrors === 0) {
    // An undecodable resource might be one that is "missing": then nothing can be called deleted.
    // Most often every subscribed name is in the response: then no entry need be looked at.
    if (named < ctx.entryCount()) findDeletions(ctx, seen, notifications);
  }

  const verdict: ResponseVerdict =
    errors.length === 0
      ? timed || delta
        ? { applied: true }
        : { applied: true, memo: applied }
      : {
          nack: `xDS response validation errors: [${errors.join('; ')}]`,
          applied: applied.length > 0,
        };
  return { verdict, notifications, valid: applied.length, invalid: errors.length };
}

/** SotW: a cached Listener or Cluster missing from a response has been deleted. */
function findDeletions(
  ctx: ResponseContext,
  seen: ReadonlySet<string>,
  notifications: Notification[],
): void {
  for (const state of ctx.entries()) {
    if (seen.has(state.name) || state.resource === undefined) continue;
    deleteResource(ctx, state, notifications);
  }
}

/**
 * Delta: every type's deletions are explicit. A cached resource is deleted; one not cached is
 * known not to exist without waiting for its timer. Unsubscribed names are ignored.
 */
function removeResources(
  removed: readonly string[],
  ctx: ResponseContext,
  seen: Set<string>,
  errors: string[],
  notifications: Notification[],
): void {
  const { type, nodeId } = ctx;
  removed.forEach((name, index) => {
    const canonical = canonicalName(name);
    if (seen.has(canonical)) {
      errors.push(
        `removed_resources[${index}]: ${type.typeName} "${name}": both updated and removed ` +
          'in one response',
      );
      return;
    }
    seen.add(canonical);
    const state = ctx.lookup(canonical);
    if (!state) return;
    if (state.resource !== undefined) {
      deleteResource(ctx, state, notifications);
      return;
    }
    if (state.status === 'DOES_NOT_EXIST') return;
    const error = new XdsError(
      status.NOT_FOUND,
      `${type.typeName} "${state.name}" does not exist: removed by the xDS server`,
      { typeUrl: type.typeUrl, resourceName: state.name, nodeId },
    );
    state.markDoesNotExist(error, (n) => notifications.push(n));
  });
}

/** The server deleted a cached resource: drop it, or keep it under A53's server feature. */
function deleteResource(
  ctx: ResponseContext,
  state: ResourceState<unknown>,
  notifications: Notification[],
): void {
  const { type, nodeId } = ctx;
  if (ctx.server.ignoreResourceDeletion) {
    const message = `${type.typeName} "${state.name}" was deleted by the xDS server; kept because of ignore_resource_deletion`;
    const error = new XdsError(status.NOT_FOUND, message, {
      typeUrl: type.typeUrl,
      resourceName: state.name,
      nodeId,
    });
    if (state.markDeletionIgnored(error, (n) => notifications.push(n))) {
      logError(`xds-client: ${message}`); // A53: log once
    }
    return;
  }
  const error = new XdsError(
    status.NOT_FOUND,
    `${type.typeName} "${state.name}" does not exist: deleted by the xDS server`,
    { typeUrl: type.typeUrl, resourceName: state.name, nodeId },
  );
  state.markDeleted(error, (n) => notifications.push(n));
}

function safeDecode(
  type: ResourceType<unknown>,
  bytes: Uint8Array,
  context: DecodeContext,
): DecodeResult<unknown> {
  try {
    return type.decode(bytes, context);
  } catch (e) {
    // A resource type broke its contract (decode must not throw): report, don't crash.
    const message = `decoder threw: ${e instanceof Error ? e.message : String(e)}`;
    return { name: undefined, errors: [{ path: '', message }] };
  }
}

function formatErrors(result: DecodeResult<unknown>): string {
  return 'errors' in result ? formatFieldErrors(result.errors) : '';
}

/**
 * A type's data could not be read at all (a file that does not parse): every subscribed
 * resource of the type gets the error, as an invalid resource would (A46, A88): cached ones
 * are kept (an ambient error) unless the server has fail_on_data_errors, the others get a
 * resource error.
 */
export function rejectType(message: string, ctx: ResponseContext): readonly Notification[] {
  const { type, server, nodeId } = ctx;
  const now = new Date();
  const notifications: Notification[] = [];
  for (const state of ctx.entries()) {
    const error = new XdsError(
      status.INVALID_ARGUMENT,
      `${type.typeName} "${state.name}": ${message}`,
      {
        typeUrl: type.typeUrl,
        resourceName: state.name,
        nodeId,
      },
    );
    const drop = state.resource === undefined || server.failOnDataErrors;
    state.markNacked(error, state.version ?? '', now, drop, (n) => notifications.push(n));
  }
  return notifications;
}
