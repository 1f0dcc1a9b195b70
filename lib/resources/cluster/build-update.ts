// The one place a ClusterUpdate is put together, for both of its readers: the validator of a
// decoded Cluster (validate.ts) and the reader of a common Cluster's bytes
// (cluster-fast-path.ts). One builder keeps the two updates the same object, property for
// property.
import type { ClusterMetadataValue } from '../gcp-authn/update';
import { lazyClusterMetadata } from '../gcp-authn/validate';
import type {
  AggregateClusterUpdate,
  BackendMetricPropagation,
  ClusterUpdate,
  EdsClusterUpdate,
  LogicalDnsClusterUpdate,
} from './update';

/** What only one kind of cluster has. */
export type ClusterVariant =
  | Pick<EdsClusterUpdate, 'type' | 'edsServiceName'>
  | Pick<LogicalDnsClusterUpdate, 'type' | 'dnsHostname'>
  | Pick<AggregateClusterUpdate, 'type' | 'prioritizedClusterNames'>;

/**
 * What every kind of cluster has, validated; the optional properties as their readers leave
 * them (the metadata possibly still bytes, decision 0081).
 */
export interface ClusterParts extends Pick<
  ClusterUpdate,
  | 'lrsServer'
  | 'maxConcurrentRequests'
  | 'lbPolicy'
  | 'outlierDetection'
  | 'security'
  | 'overrideHostStatus'
> {
  /** The Map, or the checked bytes to read it from when first asked for. */
  readonly metadata: ReadonlyMap<string, ClusterMetadataValue> | Uint8Array | undefined;
  readonly httpConnect: boolean;
  readonly backendMetricPropagation: BackendMetricPropagation | undefined;
}

/** The default override_host_status (gRFC A55, as C-core reads it). */
export const DEFAULT_OVERRIDE_HOST_STATUS: ClusterUpdate['overrideHostStatus'] = Object.freeze([
  'UNKNOWN',
  'HEALTHY',
]);

/** The properties an update has only when its Cluster says so. */
type OptionalProperties = {
  -readonly [K in 'metadata' | 'httpConnect' | 'backendMetricPropagation']?: ClusterUpdate[K];
};

/** What `optionalProperties` gives a cluster that has none of them. */
const NO_OPTIONAL_PROPERTIES: Readonly<OptionalProperties> = Object.freeze({});

/**
 * The frozen update, from one object literal per kind of cluster with the optional properties
 * spread in as one object (a shared empty one when there are none). The shape is for memory:
 * V8 gives a literal one in-object slot per entry, a spread counting one, and the one spread
 * leaves the slot that lazily read metadata keeps its bytes in. Spreading the variant in as
 * well leaves one slot too few, and the bytes then take a property array of their own: 473
 * bytes per update against 440. (Each optional property spread on its own also made a
 * temporary object per Cluster.)
 */
export function buildClusterUpdate(
  name: string,
  variant: ClusterVariant,
  parts: ClusterParts,
): ClusterUpdate {
  const { lrsServer, maxConcurrentRequests, lbPolicy, outlierDetection, security } = parts;
  const { overrideHostStatus, metadata } = parts;
  const optional = optionalProperties(parts);
  // The same properties in each literal, in the same order, after the variant's own.
  let update: ClusterUpdate;
  switch (variant.type) {
    case 'EDS': {
      const { type, edsServiceName } = variant;
      update = {
        name,
        type,
        edsServiceName,
        lrsServer,
        maxConcurrentRequests,
        lbPolicy,
        outlierDetection,
        security,
        overrideHostStatus,
        ...optional,
      };
      break;
    }
    case 'LOGICAL_DNS': {
      const { type, dnsHostname } = variant;
      update = {
        name,
        type,
        dnsHostname,
        lrsServer,
        maxConcurrentRequests,
        lbPolicy,
        outlierDetection,
        security,
        overrideHostStatus,
        ...optional,
      };
      break;
    }
    case 'AGGREGATE': {
      const { type, prioritizedClusterNames } = variant;
      update = {
        name,
        type,
        prioritizedClusterNames,
        lrsServer,
        maxConcurrentRequests,
        lbPolicy,
        outlierDetection,
        security,
        overrideHostStatus,
        ...optional,
      };
      break;
    }
  }
  // Read into a Map when first asked for (decision 0081): an own enumerable property all the same.
  if (metadata instanceof Uint8Array) lazyClusterMetadata(update, metadata);
  return Object.freeze(update);
}

/** The optional properties the parts give; a shared object when none. */
function optionalProperties(parts: ClusterParts): Readonly<OptionalProperties> {
  const { metadata, httpConnect, backendMetricPropagation } = parts;
  const map = metadata !== undefined && !(metadata instanceof Uint8Array) ? metadata : undefined;
  if (map === undefined && !httpConnect && backendMetricPropagation === undefined) {
    return NO_OPTIONAL_PROPERTIES;
  }
  const optional: OptionalProperties = {};
  if (map !== undefined) optional.metadata = map;
  if (httpConnect) optional.httpConnect = true;
  if (backendMetricPropagation !== undefined) {
    optional.backendMetricPropagation = backendMetricPropagation;
  }
  return optional;
}
