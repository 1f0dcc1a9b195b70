// The parsers of the bootstrap's optional parts, loaded with the first bootstrap that has one:
// `certificate_providers`, a `tls` channel_creds config, `call_creds`. Most bootstraps have none
// of them, and the import does not pay for them (decision 0095).

/** certificates.ts: `certificate_providers` and a `tls` entry's file names. */
export const certificateParsers = (): typeof import('./certificates') =>
  require('./certificates') as typeof import('./certificates');

/** call-creds.ts: a server entry's `call_creds`. */
export const callCredsParsers = (): typeof import('./call-creds') =>
  require('./call-creds') as typeof import('./call-creds');
