// GcpAuthnFilterConfig and a Cluster's `metadata` (gRFC A83) → their validated forms, or the
// problems found at their field paths.
import { messageCodec, typeNameOfUrl } from '../../codec';
import { errorReason } from '../../errors';
import { int64ToNumber } from '../common';
import type { Any, Metadata, Struct } from '../../generated/protos';
import { ValidationErrors } from '../../validation-errors';
import { scanMetadata } from '../metadata-scan';
import { decodeAnyValue, decodeMessage } from '../any';
import { EMPTY_CONFIG, structToJson } from '../struct';
import type { ClusterMetadataValue, GcpAuthnConfig } from './update';

export const GCP_AUTHN_FILTER_TYPE =
  'envoy.extensions.filters.http.gcp_authn.v3.GcpAuthnFilterConfig';
const AUDIENCE_TYPE = 'envoy.extensions.filters.http.gcp_authn.v3.Audience';

/** A83's default number of cached audiences. */
export const DEFAULT_CACHE_SIZE = 10;
/** A cache larger than this is capped (A83 allows a cap): no channel talks to more audiences. */
const MAX_CACHE_SIZE = 2 ** 31 - 1;

/** The filter's config at the current path (an `http_filters[i].typed_config`, or an override). */
export function validateGcpAuthnConfig(
  value: Uint8Array | undefined,
  errors: ValidationErrors,
): GcpAuthnConfig | undefined {
  if (value === undefined) {
    errors.add(`unsupported value TypedStruct for ${GCP_AUTHN_FILTER_TYPE}`);
    return undefined;
  }
  const config = decodeMessage(GCP_AUTHN_FILTER_TYPE, value, errors);
  if (!config) return undefined;
  const size = config.cacheConfig?.cacheSize;
  if (!size) return Object.freeze({ cacheSize: DEFAULT_CACHE_SIZE });
  const cacheSize = int64ToNumber(size.value);
  if (cacheSize <= 0) {
    errors.addAt('cache_config.cache_size', 'must be greater than 0');
    return undefined;
  }
  return Object.freeze({ cacheSize: Math.min(cacheSize, MAX_CACHE_SIZE) });
}

/**
 * A Cluster's `metadata` at the current path (A83): each key from `typed_filter_metadata` when
 * its type is one gRPC parses (an `Audience`, whose `url` must be non-empty), else from
 * `filter_metadata` as JSON. Undefined when there is none.
 */
export function validateClusterMetadata(
  metadata: Metadata,
  errors: ValidationErrors,
): ReadonlyMap<string, ClusterMetadataValue> | undefined {
  const parsed = new Map<string, ClusterMetadataValue>();
  // for-in, not Object.entries: this runs for every cached Cluster with metadata.
  const typed = metadata.typedFilterMetadata;
  for (const key in typed) {
    // An entry sent without its value decodes to null: an empty Any, not an Audience.
    const any = typed[key] as Any | null;
    if (any === null || typeNameOfUrl(any.type_url) !== AUDIENCE_TYPE) continue;
    errors.field(`typed_filter_metadata[${key}]`, () => {
      const audience = decodeAnyValue(AUDIENCE_TYPE, any, errors);
      if (!audience) return;
      if (audience.url === '') errors.addAt('url', 'must be non-empty');
      else parsed.set(key, Object.freeze({ type: 'audience', url: audience.url }));
    });
  }
  const structs = metadata.filterMetadata;
  for (const key in structs) {
    if (!parsed.has(key))
      parsed.set(key, Object.freeze({ type: 'struct', json: structJsonOf(structs[key]) }));
  }
  return parsed.size === 0 ? undefined : parsed;
}

const metadataCodec = messageCodec('envoy.config.core.v3.Metadata');

/** An entry sent without its value decodes to null: the empty Struct, `{}`. */
function structJsonOf(struct: Struct | null | undefined): Readonly<Record<string, unknown>> {
  return struct ? structToJson(struct) : EMPTY_CONFIG;
}

/**
 * A Cluster's `metadata`, as the decoder leaves it: its bytes (decision 0081). They are checked
 * now, as decoding them would (an error at `metadata`), and this says what the update gets:
 * nothing when there is no `filter_metadata` entry nor Audience; the Map, made and validated now,
 * when a typed entry is an Audience (A83: its url must be valid for the Cluster to be); else the
 * bytes, for `lazyClusterMetadata` to read into the Map the first time the update's `metadata`
 * is read. Most Clusters carry metadata (Istio puts its service in every one) that gRPC itself
 * never reads.
 */
export function clusterMetadata(
  bytes: Uint8Array,
  errors: ValidationErrors,
): ReadonlyMap<string, ClusterMetadataValue> | Uint8Array | undefined {
  let scan;
  try {
    scan = scanMetadata(bytes, AUDIENCE_TYPE);
  } catch (e) {
    errors.addAt('metadata', `can't parse envoy.config.core.v3.Metadata: ${errorReason(e)}`);
    return undefined;
  }
  if (scan.hasTypedEntryOf) {
    return errors.field('metadata', () =>
      validateClusterMetadata(metadataCodec.decode(bytes), errors),
    );
  }
  return scan.structs === 0 ? undefined : bytes;
}

/**
 * What `clusterMetadata` gives when that needs no validation (the Cluster fast path): nothing
 * for metadata with no `filter_metadata` entry, else the bytes to read when first asked for;
 * null when only `clusterMetadata` can say (bytes that do not parse, an Audience to check).
 */
export function unvalidatedClusterMetadata(bytes: Uint8Array): Uint8Array | undefined | null {
  let scan;
  try {
    scan = scanMetadata(bytes, AUDIENCE_TYPE);
  } catch {
    return null;
  }
  if (scan.hasTypedEntryOf) return null;
  return scan.structs === 0 ? undefined : bytes;
}

// The update's `metadata` is an accessor on the update itself, so that it stays a plain object
// (compared, spread and printed as before). Every update shares one getter (a getter per update
// would give each its own hidden class) and keeps its bytes in a private field that
// `MetadataBytes` stamps on it: invisible to reflection, printing and comparison like a
// non-enumerable property, but set by an inline-cached store where `Object.defineProperty` was
// a runtime call, once per cached Cluster.

/** Its constructor hands back the object given: a subclass's fields are then put on that one. */
class Stamp {
  constructor(target: object) {
    return target as Stamp;
  }
}

class MetadataBytes extends Stamp {
  readonly #bytes: Uint8Array;

  private constructor(target: object, bytes: Uint8Array) {
    super(target);
    this.#bytes = bytes;
  }

  static put(target: object, bytes: Uint8Array): void {
    new MetadataBytes(target, bytes);
  }

  static of(target: object): Uint8Array {
    return (target as MetadataBytes).#bytes;
  }
}

const madeMetadata = new WeakMap<object, ReadonlyMap<string, ClusterMetadataValue>>();

function readLazyMetadata(this: object): ReadonlyMap<string, ClusterMetadataValue> {
  let made = madeMetadata.get(this);
  if (made === undefined) {
    // Scanned when the Cluster was validated: decoding and reading cannot fail.
    const metadata = metadataCodec.decode(MetadataBytes.of(this));
    made = validateClusterMetadata(metadata, new ValidationErrors())!;
    madeMetadata.set(this, made);
  }
  return made;
}

/** Every update's `metadata` getter. */
const LAZY_METADATA: PropertyDescriptor = Object.freeze({
  get: readLazyMetadata,
  enumerable: true,
});

/** Gives a (not yet frozen) update a `metadata` read from `bytes` when first asked for. */
export function lazyClusterMetadata(update: object, bytes: Uint8Array): void {
  MetadataBytes.put(update, bytes);
  Object.defineProperty(update, 'metadata', LAZY_METADATA);
}
