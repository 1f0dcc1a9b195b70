// The one place a ClusterUpdate is put together, for both of its readers: the validator of a
// decoded Cluster (validate.ts) and the reader of a common Cluster's bytes
// (cluster-fast-path.ts). One builder keeps the two updates the same object, property for
// property.
import type { XdsServerConfig } from '../../bootstrap';
import type { ClusterMetadataValue } from '../gcp-authn/update';
import { lazyClusterMetadata } from '../gcp-authn/validate';
import type {
  BackendMetricPropagation,
  ClusterUpdate,
  LbPolicy,
  OutlierDetection,
  OverrideHostStatus,
  UpstreamTlsConfig,
} from './update';

/** What only one kind of cluster has. */
export type ClusterVariant =
  | { readonly type: 'EDS'; readonly edsServiceName: string | undefined }
  | { readonly type: 'LOGICAL_DNS'; readonly dnsHostname: string }
  | { readonly type: 'AGGREGATE'; readonly prioritizedClusterNames: readonly string[] };

/** What every kind of cluster has, validated. */
export interface ClusterParts {
  readonly lrsServer: XdsServerConfig | undefined;
  readonly maxConcurrentRequests: number;
  readonly lbPolicy: LbPolicy;
  readonly outlierDetection: OutlierDetection | undefined;
  readonly security: UpstreamTlsConfig | undefined;
  readonly overrideHostStatus: readonly OverrideHostStatus[];
  /** The Map, or the checked bytes to read it from when first asked for (decision 0081). */
  readonly metadata: ReadonlyMap<string, ClusterMetadataValue> | Uint8Array | undefined;
  readonly httpConnect: boolean;
  readonly backendMetricPropagation: BackendMetricPropagation | undefined;
}

/** The default override_host_status (gRFC A55, as C-core reads it). */
export const DEFAULT_OVERRIDE_HOST_STATUS: readonly OverrideHostStatus[] = Object.freeze([
  'UNKNOWN',
  'HEALTHY',
]);

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The frozen update. Built from object literals, not object spread: this runs once per Cluster,
 * often before V8 has optimised it, and unoptimised code pays a runtime call for each spread.
 * One literal per kind keeps every property in the object itself.
 */
export function buildClusterUpdate(
  name: string,
  variant: ClusterVariant,
  parts: ClusterParts,
): ClusterUpdate {
  const { lrsServer, maxConcurrentRequests, lbPolicy, outlierDetection, security } = parts;
  const { overrideHostStatus } = parts;
  // The same six properties in each literal, after the variant's, as spreading them gave.
  let update: Writable<ClusterUpdate>;
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
      };
      break;
    }
  }
  const { metadata, backendMetricPropagation } = parts;
  if (metadata !== undefined && !(metadata instanceof Uint8Array)) update.metadata = metadata;
  if (parts.httpConnect) update.httpConnect = true;
  if (backendMetricPropagation !== undefined) {
    update.backendMetricPropagation = backendMetricPropagation;
  }
  // Read into a Map when first asked for (decision 0081): an own enumerable property all the same.
  if (metadata instanceof Uint8Array) lazyClusterMetadata(update, metadata);
  return Object.freeze(update);
}
