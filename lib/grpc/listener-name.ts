// Which Listener an `xds:` target names (gRFC A27, A47).

import { status } from '@grpc/grpc-js';
import type { Bootstrap } from '../bootstrap';
import { XdsError } from '../errors';

/**
 * The Listener resource name for target `xds://targetAuthority/path`: the bootstrap authority
 * of that name's `client_listener_resource_name_template` (no target authority: the
 * bootstrap's `client_default_listener_resource_name_template`) with `%s` replaced by the path,
 * percent-encoded when the template is an `xdstp:` name. Throws XdsError(UNAVAILABLE) for a
 * target authority the bootstrap does not have.
 */
export function listenerNameFor(
  bootstrap: Bootstrap,
  targetAuthority: string,
  path: string,
): string {
  let template = bootstrap.clientDefaultListenerResourceNameTemplate;
  if (targetAuthority !== '') {
    const config = bootstrap.authorities.get(targetAuthority);
    if (!config) {
      throw new XdsError(
        status.UNAVAILABLE,
        `xds: target authority "${targetAuthority}" is not in the bootstrap's authorities`,
        { nodeId: bootstrap.node.id },
      );
    }
    template = config.clientListenerResourceNameTemplate;
  }
  const id = template.startsWith('xdstp:') ? percentEncodePath(path) : path;
  return template.replaceAll('%s', id);
}

/** RFC 3986 path characters stay as they are (C-core's and grpc-go's choice); the rest are %XX. */
export function percentEncodePath(text: string): string {
  return encodeURIComponent(text).replace(/%(2F|3A|40|21|24|26|27|28|29|2A|2B|2C|3B|3D)/g, (e) =>
    decodeURIComponent(e),
  );
}
