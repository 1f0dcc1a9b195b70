// The credentials of a connection to an xDS server, from the bootstrap's channel_creds. The
// `tls` files are read and checked when the client is built, so that a missing or malformed
// file is an error naming the bootstrap field, not a raw ENOENT from the first watch(). After
// that they are watched (gRFC A65): every `refresh_interval` while a connection is made, so a
// service keeps connecting after its certificates rotate.

import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { credentials, experimental, status, type ChannelCredentials } from '@grpc/grpc-js';
import type { XdsServerConfig } from '../../bootstrap';
import type { FileWatcherConfig } from '../../bootstrap';
import { XdsError } from '../../errors';

// Loaded by the first server entry that asks for them: a client on insecure credentials or on
// TLS with the system's roots does not pay for them at import (decision 0095).
const certificateFileWatcher = (): typeof import('./certificate-file-watcher') =>
  require('./certificate-file-watcher') as typeof import('./certificate-file-watcher');
const googleDefault = (): typeof import('./google-default-credentials') =>
  require('./google-default-credentials') as typeof import('./google-default-credentials');

type PemKind = 'certificate' | 'private key';

const TLS_FILES: readonly (readonly [
  field: string,
  key: keyof FileWatcherConfig,
  kind: PemKind,
])[] = [
  ['ca_certificate_file', 'caCertificateFile', 'certificate'],
  ['certificate_file', 'certificateFile', 'certificate'],
  ['private_key_file', 'privateKeyFile', 'private key'],
];

/**
 * Builds the grpc-js credentials for one server. `where` is the server's bootstrap path
 * (`xds_servers[0]`), used in errors. Throws XdsError(INVALID_ARGUMENT).
 */
export function channelCredentials(
  server: XdsServerConfig,
  where = 'xds_servers[]',
): ChannelCredentials {
  const { type, tls: files } = server.channelCreds;
  if (type === 'insecure') return credentials.createInsecure();
  if (type === 'google_default') return googleDefault().googleDefaultCredentials(where);
  // The bootstrap read the files' names when it was loaded; a `tls` entry always has them.
  if (!files) throw new XdsError(status.INVALID_ARGUMENT, `${where}.channel_creds (tls): invalid`);
  for (const [field, key, kind] of TLS_FILES) {
    const file = files[key];
    if (typeof file === 'string')
      checkPem(file, kind, `${where}.channel_creds (tls).config.${field}`);
  }
  if (files.certificateFile !== undefined && files.privateKeyFile !== undefined) {
    checkIdentityPair(files.certificateFile, files.privateKeyFile, `${where}.channel_creds (tls)`);
  }
  if (files.caCertificateFile === undefined && files.certificateFile === undefined) {
    return credentials.createSsl();
  }
  const { FileWatcherCertificateProvider } = certificateFileWatcher();
  const watcher = new FileWatcherCertificateProvider(files, `${where}.channel_creds (tls)`);
  return experimental.createCertificateProviderChannelCredentials(
    files.caCertificateFile === undefined ? SYSTEM_ROOTS : watcher,
    files.certificateFile === undefined ? null : watcher,
  );
}

/** Node's bundled root certificates, for an identity that rotates without a CA file. */
const SYSTEM_ROOTS: experimental.CertificateProvider = {
  addCaCertificateListener: (listener) =>
    process.nextTick(() => listener({ caCertificate: Buffer.from(rootCertificates.join('\n')) })),
  removeCaCertificateListener() {},
  addIdentityCertificateListener() {},
  removeIdentityCertificateListener() {},
};

/** The certificate and the key must belong together, or every handshake would fail. */
function checkIdentityPair(certificateFile: string, keyFile: string, where: string): void {
  const certificate = new X509Certificate(readFileSync(certificateFile));
  if (!certificate.checkPrivateKey(createPrivateKey(readFileSync(keyFile)))) {
    throw new XdsError(
      status.INVALID_ARGUMENT,
      `${where}: config.private_key_file "${keyFile}" is not the key of config.certificate_file "${certificateFile}"`,
    );
  }
}

function checkPem(file: string, kind: PemKind, field: string): void {
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
}
