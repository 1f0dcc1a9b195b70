// gRFC A86: the HTTP CONNECT proxy an endpoint is reached through, from EDS metadata. The key
// `envoy.http11_proxy_transport_socket.proxy_address` of `typed_filter_metadata` holding an
// envoy.config.core.v3.Address; endpoint-level metadata first, then the locality's. A value of
// another type is ignored (A86); an Address that is not an IP literal with a port is NACKed.
// The proxy is used only when the Cluster's transport socket is Http11ProxyUpstreamTransport.
import { isIP } from 'node:net';
import type { Metadata } from '../../generated/protos';
import type { ValidationErrors } from '../../validation-errors';
import { decodeAnyValue, typeUrlOf } from '../any';
import type { EndpointAddress } from './update';

export const PROXY_ADDRESS_METADATA_KEY = 'envoy.http11_proxy_transport_socket.proxy_address';
const ADDRESS_TYPE_URL = typeUrlOf('envoy.config.core.v3.Address');

/** Whether `metadata` has an entry that proxyAddress must look at (the fast path falls back). */
export function hasProxyAddress(metadata: Metadata | null): boolean {
  return metadata?.typedFilterMetadata[PROXY_ADDRESS_METADATA_KEY] !== undefined;
}

/**
 * The proxy address `metadata` (at the current path) names, validated; undefined when it names
 * none or after recording errors.
 */
export function proxyAddress(
  metadata: Metadata | null,
  errors: ValidationErrors,
): EndpointAddress | undefined {
  const any = metadata?.typedFilterMetadata[PROXY_ADDRESS_METADATA_KEY];
  if (any === undefined || any.type_url !== ADDRESS_TYPE_URL) return undefined;
  return errors.field('metadata', () =>
    errors.field(`typed_filter_metadata[${PROXY_ADDRESS_METADATA_KEY}]`, () => {
      const address = decodeAnyValue('envoy.config.core.v3.Address', any, errors);
      if (address === undefined) return undefined;
      const socket = address.socketAddress;
      if (socket === null) {
        errors.addAt('socket_address', 'field not present');
        return undefined;
      }
      return errors.field('socket_address', () => {
        const before = errors.count;
        if (isIP(socket.address) === 0) errors.addAt('address', 'must be an IP address');
        const port = socket.portSpecifier === 'portValue' ? socket.portValue : null;
        if (port === null) errors.addAt('port_value', 'field not present');
        else if (port > 65535) errors.addAt('port_value', 'must be in range [0, 65535]');
        if (errors.count !== before || port === null) return undefined;
        return Object.freeze({ address: socket.address, port });
      });
    }),
  );
}
