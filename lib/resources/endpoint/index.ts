// The ClusterLoadAssignment (EDS) resource type: what the client core needs to decode and
// validate it.
import { messageCodec } from '../../codec';
import { decodeAndValidate, onFirstUse, peekNameField } from '../common';
import type { ResourceType } from '../resource-type';
import type { EndpointUpdate } from './update';

const validation = onFirstUse(() => require('./validate') as typeof import('./validate'));

export type {
  DropOverload,
  EndpointAddress,
  EndpointHealthStatus,
  EndpointUpdate,
  LbEndpoint,
  LocalityEndpoints,
  LocalityName,
} from './update';

const codec = messageCodec('envoy.config.endpoint.v3.ClusterLoadAssignment');

export const endpointResourceType: ResourceType<EndpointUpdate> = Object.freeze<
  ResourceType<EndpointUpdate>
>({
  typeUrl: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  typeName: 'ClusterLoadAssignment',
  // An EDS response need not repeat unchanged resources: absence is not deletion.
  allResourcesRequiredInSotW: false,
  decode(bytes) {
    return decodeAndValidate(
      'ClusterLoadAssignment',
      bytes,
      (bytes) => validation().readAssignment(bytes),
      (assignment) => assignment.clusterName,
      (assignment, errors) => {
        const update = validation().validateEndpoints(assignment, errors);
        // validateEndpoints returns undefined only after recording an error, and
        // decodeAndValidate drops the value whenever there is one.
        if (update === undefined && errors.isEmpty) errors.add('internal error: no update built');
        return update as EndpointUpdate;
      },
    );
  },
  peekName: peekNameField,
  prepare: () => {
    codec.prepareDecode();
    validation();
  },
});
