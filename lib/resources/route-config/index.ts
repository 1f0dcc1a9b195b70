// The RouteConfiguration resource type (RDS): what the client core needs to decode it.
import { messageCodec } from '../../codec';
import { decodeAndValidate, onFirstUse, peekNameField } from '../common';
import type { ResourceType } from '../resource-type';
import type { RouteConfigUpdate } from './update';

const validation = onFirstUse(() => require('./validate') as typeof import('./validate'));

export type {
  ClusterAction,
  FaultAbort,
  FaultDelay,
  FaultInjectionConfig,
  FaultPercentage,
  FilterOverride,
  FilterOverrides,
  ForwardingSettings,
  HashPolicy,
  HeaderMatch,
  PathMatch,
  RetryOnCode,
  RetryPolicy,
  Route,
  RouteAction,
  RouteConfigUpdate,
  RouteMatch,
  StringMatch,
  VirtualHost,
  WeightedCluster,
  WeightedClustersAction,
} from './update';
export { findVirtualHost, isValidDomainPattern } from './virtual-host-matching';
export { compileSafeRegex, type CompiledRegex } from '../safe-regex';
export { grpcCodeForHttpStatus, sanitizeGrpcCode } from './grpc-codes';

const codec = messageCodec('envoy.config.route.v3.RouteConfiguration');

export const routeConfigResourceType: ResourceType<RouteConfigUpdate> = {
  typeUrl: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
  typeName: 'RouteConfiguration',
  // RDS is not state-of-the-world complete: a missing RouteConfiguration is not a deletion.
  allResourcesRequiredInSotW: false,
  decode: (bytes, context) =>
    decodeAndValidate(
      'RouteConfiguration',
      bytes,
      codec.decode,
      (config) => config.name,
      (config, errors) =>
        validation().validateRouteConfiguration(config, errors, {
          trustedXdsServer: context?.server.trustedXdsServer,
        }),
    ),
  peekName: peekNameField,
  prepare: () => {
    codec.prepareDecode();
    validation();
  },
};
