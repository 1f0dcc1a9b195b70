// `google_default` channel creds (Traffic Director): TLS with the system's roots, plus call
// credentials from Google's Application Default Credentials — GOOGLE_APPLICATION_CREDENTIALS,
// gcloud's user credentials, or the GCE / GKE metadata server — through google-auth-library.
// That library is an optional peer dependency, loaded only when a bootstrap selects these creds
// (decision 0019): a client that never talks to Google never loads it.
import {
  CallCredentials,
  credentials,
  Metadata,
  status,
  type ChannelCredentials,
} from '@grpc/grpc-js';
import type { GoogleAuth } from 'google-auth-library';
import { XdsError } from '../../errors';

const PACKAGE = 'google-auth-library';

/** Throws XdsError(INVALID_ARGUMENT) naming `where` when google-auth-library is not installed. */
export function googleDefaultCredentials(where: string): ChannelCredentials {
  let library: typeof import('google-auth-library');
  try {
    library = require(PACKAGE) as typeof import('google-auth-library');
  } catch (e) {
    throw new XdsError(
      status.INVALID_ARGUMENT,
      `${where}.channel_creds (google_default): needs the package ${PACKAGE} (npm install ${PACKAGE})`,
      { cause: e },
    );
  }
  const auth = new library.GoogleAuth();
  return credentials.createSsl().compose(googleCallCredentials(auth, where));
}

/**
 * Each call's `authorization` (and any other header Google's client adds) for the service URL
 * grpc-js passes. google-auth-library 10 returns a fetch `Headers` object, earlier versions a
 * plain object: both are read here (grpc-js's own createFromGoogleCredential reads only the
 * latter, and would send no credentials with version 10).
 */
function googleCallCredentials(auth: GoogleAuth, where: string): CallCredentials {
  return CallCredentials.createFromMetadataGenerator((options, callback) => {
    auth.getRequestHeaders(options.service_url).then(
      (headers: unknown) => {
        const metadata = new Metadata();
        for (const [key, value] of headerEntries(headers)) metadata.add(key, value);
        callback(null, metadata);
      },
      (error: unknown) => {
        const reason = error instanceof Error ? error.message : String(error);
        callback(
          new Error(
            `${where}.channel_creds (google_default): no usable Google credentials ` +
              `(GOOGLE_APPLICATION_CREDENTIALS, gcloud auth, or a GCE metadata server): ${reason}`,
          ),
        );
      },
    );
  });
}

function headerEntries(headers: unknown): [string, string][] {
  if (headers instanceof Headers) return [...headers.entries()];
  if (typeof headers === 'object' && headers !== null) {
    return Object.entries(headers).filter((e): e is [string, string] => typeof e[1] === 'string');
  }
  return [];
}
