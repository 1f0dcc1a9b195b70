// The credentials of a connection to an xDS server, from the bootstrap's channel_creds. The
// `tls` files are read and checked when the client is built, so that a missing or malformed
// file is an error naming the bootstrap field, not a raw ENOENT from the first watch().

import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { credentials, status, type ChannelCredentials } from '@grpc/grpc-js';
import type { XdsServerConfig } from '../bootstrap';
import { XdsError } from '../errors';

type PemKind = 'certificate' | 'private key';

const TLS_FILES: readonly (readonly [field: string, kind: PemKind])[] = [
  ['ca_certificate_file', 'certificate'],
  ['certificate_file', 'certificate'],
  ['private_key_file', 'private key'],
];

/**
 * Builds the grpc-js credentials for one server. `where` is the server's bootstrap path
 * (`xds_servers[0]`), used in errors. Throws XdsError(INVALID_ARGUMENT).
 */
export function channelCredentials(
  server: XdsServerConfig,
  where = 'xds_servers[]',
): ChannelCredentials {
  const { type, config } = server.channelCreds;
  if (type === 'insecure') return credentials.createInsecure();
  const [ca, cert, key] = TLS_FILES.map(([field, kind]) => {
    const file = config[field];
    return typeof file === 'string'
      ? readPem(file, kind, `${where}.channel_creds (${type}).config.${field}`)
      : null;
  });
  try {
    // `google_default` has no grpc-js equivalent: TLS with the system roots is the closest.
    return credentials.createSsl(ca, key, cert);
  } catch (e) {
    throw new XdsError(
      status.INVALID_ARGUMENT,
      `${where}.channel_creds (${type}): ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  }
}

function readPem(file: string, kind: PemKind, field: string): Buffer {
  let pem: Buffer;
  try {
    pem = readFileSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    throw new XdsError(status.INVALID_ARGUMENT, `${field}: cannot read "${file}" (${code})`, {
      cause: e,
    });
  }
  try {
    if (kind === 'certificate') new X509Certificate(pem);
    else createPrivateKey(pem);
  } catch (e) {
    throw new XdsError(status.INVALID_ARGUMENT, `${field}: "${file}" is not a PEM ${kind}`, {
      cause: e,
    });
  }
  return pem;
}
