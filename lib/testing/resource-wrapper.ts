// The `envoy.service.discovery.v3.Resource` wrapper as the server sends it: around a TTL'd
// resource in SotW, around every resource in delta, and alone (no body) as a heartbeat.
import { messageCodec } from '../codec';
import type { Any, Resource } from '../generated/protos';
import type { StoredResource } from './resource-store';

const wrapperCodec = messageCodec('envoy.service.discovery.v3.Resource');
export const RESOURCE_WRAPPER_URL = 'type.googleapis.com/envoy.service.discovery.v3.Resource';

/** A Resource message; `heartbeat` leaves the body out (name, version and TTL only). */
export function wrapResource(
  typeUrl: string,
  resource: StoredResource,
  heartbeat = false,
): Resource {
  return {
    name: resource.name,
    aliases: [],
    version: resource.version,
    resource: heartbeat ? null : { type_url: typeUrl, value: resource.bytes },
    ttl: resource.ttlMs === undefined ? null : durationOf(resource.ttlMs),
    cacheControl: null,
    metadata: null,
  } as unknown as Resource;
}

/** A SotW `resources` entry: bare, or wrapped when it has a TTL or is a heartbeat. */
export function sotwEntry(typeUrl: string, resource: StoredResource, heartbeat = false): Any {
  if (resource.ttlMs === undefined && !heartbeat) {
    return { type_url: typeUrl, value: resource.bytes };
  }
  const value = wrapperCodec.encode(wrapResource(typeUrl, resource, heartbeat));
  return { type_url: RESOURCE_WRAPPER_URL, value };
}

function durationOf(ms: number): { seconds: number; nanos: number } {
  const total = Math.round(ms * 1e6);
  return { seconds: Math.floor(total / 1e9), nanos: total % 1e9 };
}
