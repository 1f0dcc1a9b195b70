// The server's resources: per type URL, a version counter and the encoded resources by name.
import { lookupMessageType, typeNameOfUrl } from '../codec';
import { toResource, type EncodedResource } from './json-message';
import { STANDARD_TYPE_URLS, shortTypeName } from './resource-types';

/** Proto3 JSON of a resource (snake_case or lowerCamelCase keys, `@type` for Any). */
export type ResourceJson = { readonly [key: string]: unknown };

/** A resource as JSON, or already encoded (for custom types, or bytes built elsewhere). */
export type ResourceInput = ResourceJson | EncodedResource;

/** A resource as served: its bytes, its own version (delta, `Resource`) and its TTL. */
export interface StoredResource extends EncodedResource {
  /** The type's version when these bytes were set: unchanged bytes keep their version. */
  readonly version: string;
  /** Served in a `Resource` wrapper with this TTL (SotW too). */
  readonly ttlMs: number | undefined;
}

interface TypeResources {
  version: number;
  readonly byName: Map<string, StoredResource>;
}

export class ResourceStore {
  private readonly types = new Map<string, TypeResources>();

  constructor() {
    // The four xDS types are served from the start, empty at version "0", as a control plane
    // with an empty snapshot would: a client's subscription is answered, and its timers run.
    for (const typeUrl of STANDARD_TYPE_URLS) this.types.set(typeUrl, newType());
  }

  /** Types never set are unknown to the server: their requests get no response. */
  serves(typeUrl: string): boolean {
    return this.types.has(typeUrl);
  }

  version(typeUrl: string): string {
    return String(this.types.get(typeUrl)?.version ?? '');
  }

  /** Encodes everything first, so a bad resource changes nothing. */
  replace(typeUrl: string, inputs: readonly ResourceInput[], ttlMs?: number): void {
    const byName = new Map<string, EncodedResource>();
    inputs.forEach((input, index) => {
      const path = `${shortTypeName(typeUrl)}[${index}]`;
      const resource = encodeInput(typeUrl, input, path);
      if (byName.has(resource.name)) {
        throw new Error(`${path}: duplicate resource name ${JSON.stringify(resource.name)}`);
      }
      byName.set(resource.name, resource);
    });
    const type = this.typeOf(typeUrl);
    type.version++;
    const old = new Map(type.byName);
    type.byName.clear();
    for (const [name, resource] of byName) {
      type.byName.set(name, stored(resource, old.get(name), type.version, ttlMs));
    }
  }

  /** Returns the resource's name. */
  upsert(typeUrl: string, input: ResourceInput, ttlMs?: number): string {
    const resource = encodeInput(typeUrl, input, shortTypeName(typeUrl));
    const type = this.typeOf(typeUrl);
    type.version++;
    type.byName.set(
      resource.name,
      stored(resource, type.byName.get(resource.name), type.version, ttlMs),
    );
    return resource.name;
  }

  get(typeUrl: string, name: string): StoredResource | undefined {
    return this.types.get(typeUrl)?.byName.get(name);
  }

  /** Every name of the type (for wildcard subscriptions). */
  names(typeUrl: string): Iterable<string> {
    return this.types.get(typeUrl)?.byName.keys() ?? [];
  }

  remove(typeUrl: string, name: string): void {
    const type = this.typeOf(typeUrl);
    type.byName.delete(name);
    type.version++;
  }

  /** The resources a subscription asks for that exist, in the order it named them. */
  select(typeUrl: string, wildcard: boolean, names: ReadonlySet<string>): StoredResource[] {
    const type = this.types.get(typeUrl);
    if (!type) return [];
    if (wildcard) return [...type.byName.values()];
    const selected: StoredResource[] = [];
    for (const name of names) {
      const resource = type.byName.get(name);
      if (resource) selected.push(resource);
    }
    return selected;
  }

  private typeOf(typeUrl: string): TypeResources {
    let type = this.types.get(typeUrl);
    if (!type) {
      type = newType();
      this.types.set(typeUrl, type);
    }
    return type;
  }
}

/** Same bytes and TTL keep their version: a delta stream need not hear of them again. */
function stored(
  resource: EncodedResource,
  old: StoredResource | undefined,
  typeVersion: number,
  ttlMs: number | undefined,
): StoredResource {
  const same =
    old !== undefined &&
    old.ttlMs === ttlMs &&
    Buffer.compare(Buffer.from(old.bytes), Buffer.from(resource.bytes)) === 0;
  return {
    name: resource.name,
    bytes: resource.bytes,
    version: same ? old.version : String(typeVersion),
    ttlMs,
  };
}

function newType(): TypeResources {
  return { version: 0, byName: new Map() };
}

function isEncoded(input: ResourceInput): input is EncodedResource {
  const candidate = input as { readonly bytes?: unknown; readonly name?: unknown };
  return candidate.bytes instanceof Uint8Array && typeof candidate.name === 'string';
}

function encodeInput(typeUrl: string, input: ResourceInput, path: string): EncodedResource {
  if (isEncoded(input)) return { name: input.name, bytes: input.bytes };
  return toResource(typeUrl, input, path);
}

/** Best effort, for the response log: a crafted resource may well not decode. */
export function nameOfBytes(typeUrl: string, bytes: Uint8Array): string {
  const type = lookupMessageType(typeNameOfUrl(typeUrl));
  if (!type) return '';
  try {
    const message = type.decode(bytes) as unknown as Record<string, unknown>;
    const name = message['name'] ?? message['clusterName'];
    return typeof name === 'string' ? name : '';
  } catch {
    return '';
  }
}
