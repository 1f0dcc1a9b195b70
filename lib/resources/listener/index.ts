// The Listener resource type (LDS, client side): what the client core needs to decode it.
import { messageCodec } from '../../codec';
import { decodeAndValidate, onFirstUse, peekNameField } from '../common';
import type { ResourceType } from '../resource-type';
import type { ListenerUpdate } from './update';

const validation = onFirstUse(() => require('./validate') as typeof import('./validate'));

export type {
  DownstreamTlsConfig,
  HttpConnectionManagerConfig,
  HttpFilterConfig,
  ListenerUpdate,
} from './update';
export type * from '../route-config/update';
export { findVirtualHost } from '../route-config/virtual-host-matching';

const codec = messageCodec('envoy.config.listener.v3.Listener');

export const listenerResourceType: ResourceType<ListenerUpdate> = {
  typeUrl: 'type.googleapis.com/envoy.config.listener.v3.Listener',
  typeName: 'Listener',
  // LDS is state-of-the-world: a cached Listener missing from a response has been deleted.
  allResourcesRequiredInSotW: true,
  decode: (bytes, context) =>
    decodeAndValidate(
      'Listener',
      bytes,
      codec.decode,
      (listener) => listener.name,
      (listener, errors) =>
        validation().validateListener(listener, errors, context?.certificateProviders, {
          trustedXdsServer: context?.server.trustedXdsServer,
        }),
    ),
  peekName: peekNameField,
  prepare: () => {
    codec.prepareDecode();
    validation();
  },
};
