import { messageCodec } from '../../codec';
import { formatFieldErrors } from '../../errors';
import type { Any, Duration, Resource } from '../../generated/protos';
import { durationMs } from '../../resources/common';
import { ValidationErrors } from '../../validation-errors';
import { MAX_TIMER_MS } from './options';

const resourceWrapperCodec = messageCodec('envoy.service.discovery.v3.Resource');
export const RESOURCE_WRAPPER_URL = 'type.googleapis.com/envoy.service.discovery.v3.Resource';

/** One resource of a response, out of whatever envelope carried it. */
export interface WireResource {
  /** The serialized resource; undefined for a heartbeat (a `Resource` without a body). */
  readonly bytes: Uint8Array | undefined;
  /** The `Resource` wrapper's name, if it had one. */
  readonly name: string | undefined;
  /** The `Resource` wrapper's version (delta: the resource's version). */
  readonly resourceVersion: string | undefined;
  /** The `Resource` wrapper's TTL, in ms. */
  readonly ttlMs: number | undefined;
}

type Read = WireResource | { readonly error: string };

/** A SotW resource: bare in its Any, or in a `Resource` wrapper (xds.config.resource-in-sotw). */
export function readSotwResource(any: Any, responseTypeUrl: string): Read {
  if (any.type_url !== RESOURCE_WRAPPER_URL) {
    return any.type_url === responseTypeUrl
      ? { bytes: any.value, name: undefined, resourceVersion: undefined, ttlMs: undefined }
      : typeMismatch(any.type_url, responseTypeUrl);
  }
  let wrapper: Resource;
  try {
    wrapper = resourceWrapperCodec.decode(any.value);
  } catch (e) {
    return { error: `can't parse Resource wrapper: ${e instanceof Error ? e.message : String(e)}` };
  }
  return readWrapper(wrapper, responseTypeUrl, 'Resource wrapper');
}

/** A delta resource: always a `Resource`. */
export function readDeltaResource(resource: Resource, responseTypeUrl: string): Read {
  return readWrapper(resource, responseTypeUrl, 'Resource');
}

function readWrapper(wrapper: Resource, responseTypeUrl: string, what: string): Read {
  let ttlMs: number | undefined;
  if (wrapper.ttl) {
    const ttl = readTtl(wrapper.ttl);
    if (typeof ttl === 'string') return { error: `${what}: ttl: ${ttl}` };
    ttlMs = ttl;
  }
  const name = wrapper.name || undefined;
  const resourceVersion = wrapper.version;
  if (!wrapper.resource) {
    // A heartbeat: it must say which resource, at which version, it keeps alive.
    if (name === undefined) return { error: `${what}: resource: field not present` };
    return { bytes: undefined, name, resourceVersion, ttlMs };
  }
  if (wrapper.resource.type_url !== responseTypeUrl) {
    return typeMismatch(wrapper.resource.type_url, responseTypeUrl);
  }
  return { bytes: wrapper.resource.value, name, resourceVersion, ttlMs };
}

/** A TTL in ms (capped at what Node's timers can wait), or why it is not one. */
function readTtl(ttl: Duration): number | string {
  const errors = new ValidationErrors();
  const ms = durationMs(ttl, errors);
  if (!errors.isEmpty) return formatFieldErrors(errors.list());
  if (!(ms > 0)) return 'must be positive';
  return Math.min(ms, MAX_TIMER_MS);
}

function typeMismatch(typeUrl: string, responseTypeUrl: string): { error: string } {
  return { error: `type URL "${typeUrl}" does not match the response's "${responseTypeUrl}"` };
}
