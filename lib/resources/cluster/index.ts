// The Cluster (CDS) resource type: what the client core needs to decode and validate it.
import { messageCodec } from '../../codec';
import { decodeAndValidate, onFirstUse, peekNameField } from '../common';
import type { ResourceType } from '../resource-type';
import type { ClusterUpdate } from './update';

const validation = onFirstUse(() => require('./validate') as typeof import('./validate'));
const fastPath = onFirstUse(
  () => require('./cluster-fast-path') as typeof import('./cluster-fast-path'),
);

export type {
  AggregateClusterUpdate,
  BackendMetricPropagation,
  CertificateProviderInstance,
  ClusterUpdate,
  EdsClusterUpdate,
  FailurePercentageEjection,
  LbPolicy,
  LogicalDnsClusterUpdate,
  OutlierDetection,
  OverrideHostStatus,
  SubjectAltNameMatcher,
  SuccessRateEjection,
  UpstreamTlsConfig,
} from './update';
export { DEFAULT_MAX_CONCURRENT_REQUESTS } from './update';

const codec = messageCodec('envoy.config.cluster.v3.Cluster');

export const clusterResourceType: ResourceType<ClusterUpdate> = Object.freeze<
  ResourceType<ClusterUpdate>
>({
  typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  typeName: 'Cluster',
  // SotW: a Cluster missing from a response has been deleted.
  allResourcesRequiredInSotW: true,
  decode(bytes, context) {
    // The common Cluster straight from its bytes (decision 0089); the rest, and every error,
    // through the generated decoder and the validator.
    const update = fastPath().readCommonCluster(bytes, context);
    if (update !== undefined) return { name: update.name, resource: update };
    return decodeAndValidate(
      'Cluster',
      bytes,
      codec.decode,
      (c) => c.name,
      (cluster, errors) => {
        const update = validation().validateCluster(cluster, errors, context);
        // validateCluster returns undefined only after recording an error, and decodeAndValidate
        // drops the value whenever there is one.
        if (update === undefined && errors.isEmpty) errors.add('internal error: no update built');
        return update as ClusterUpdate;
      },
    );
  },
  peekName: peekNameField,
  prepare: () => {
    codec.prepareDecode();
    validation();
    fastPath();
  },
});
