// GcpAuthnFilterConfig and a Cluster's `metadata` (gRFC A83) → their validated forms, or the
// problems found at their field paths.
import { typeNameOfUrl } from '../../codec';
import { int64ToNumber } from '../common';
import type { Metadata } from '../../generated/protos';
import type { ValidationErrors } from '../../validation-errors';
import { decodeAnyValue, decodeMessage } from '../any';
import { structToJson } from '../struct';
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
    const any = typed[key]!;
    if (typeNameOfUrl(any.type_url) !== AUDIENCE_TYPE) continue;
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
      parsed.set(key, Object.freeze({ type: 'struct', json: structToJson(structs[key]!) }));
  }
  return parsed.size === 0 ? undefined : parsed;
}
