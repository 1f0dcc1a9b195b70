// The call credentials of an xDS server entry (gRFC A97's `call_creds`), for every call to it:
// the ADS stream(s) and the LRS stream. They are given to each call (not composed into the
// channel credentials, which grpc-js refuses for an insecure channel), so the rule on insecure
// channels is ours: as grpc-go and grpc-java do, the token is never sent over one, and the call
// fails with UNAUTHENTICATED naming the bootstrap field (decision 0041).
import { CallCredentials, Metadata, status } from '@grpc/grpc-js';
import type { CallCredsConfig, XdsServerConfig } from '../../bootstrap';
import type { JwtTokenFile, RetryBackoff } from './jwt-token-file';

// Loaded by the first server entry with call credentials: most have none (decision 0095).
const jwtTokenFile = (): typeof import('./jwt-token-file') =>
  require('./jwt-token-file') as typeof import('./jwt-token-file');

/**
 * The server's call credentials, or undefined when it has none. `newBackoff` gives each token
 * file its delays between failed reads.
 */
export function callCredentials(
  server: XdsServerConfig,
  newBackoff: () => RetryBackoff,
): CallCredentials | undefined {
  const configs = server.callCreds ?? [];
  if (configs.length === 0) return undefined;
  const { type } = server.channelCreds;
  const { JwtTokenFile } = jwtTokenFile();
  const all = configs.map((config) =>
    type === 'insecure' ? refused(config) : jwtCredentials(new JwtTokenFile(config, newBackoff())),
  );
  return all.reduce((a, b) => a.compose(b));
}

function jwtCredentials(token: JwtTokenFile): CallCredentials {
  return CallCredentials.createFromMetadataGenerator((_options, callback) => {
    token.authorization().then(
      (header) => {
        const metadata = new Metadata();
        metadata.set('authorization', header);
        callback(null, metadata);
      },
      (error: Error) => callback(error),
    );
  });
}

/** On an insecure channel: every call fails before anything is read or sent. */
function refused(config: CallCredsConfig): CallCredentials {
  const message =
    `${config.field} (${config.type}): not sent over an insecure channel ` +
    '(channel_creds "insecure"); use "tls" or "google_default" to send call credentials';
  return CallCredentials.createFromMetadataGenerator((_options, callback) =>
    callback(jwtTokenFile().statusError(status.UNAUTHENTICATED, message)),
  );
}
