// The bootstrap's `certificate_providers` (gRFC A29): named certificate provider instances that
// a Cluster's UpstreamTlsContext and a Listener's DownstreamTlsContext refer to by name. The one
// plugin gRPC defines is `file_watcher` (PEM files, or A87's SPIFFE trust bundle map, re-read
// every refresh_interval). Like
// grpc-go, an instance of a plugin we do not know is skipped rather than failing the bootstrap:
// a resource that names it is then NACKed as naming an instance that is not configured.

import type { ValidationErrors } from '../validation-errors';
import { durationTextMs, isObject, mustBe, own, type JsonObject } from './json';

/** gRFC A29's `file_watcher` config. At least one of the identity pair and the CA is set. */
export interface FileWatcherConfig {
  /** PEM certificate chain of our identity; set exactly when `privateKeyFile` is. */
  readonly certificateFile: string | undefined;
  readonly privateKeyFile: string | undefined;
  /** PEM CA certificates that peers are verified against (ignored when the next is set). */
  readonly caCertificateFile: string | undefined;
  /**
   * gRFC A87: a SPIFFE trust bundle map (JSON); when set, peers are verified against the roots
   * of the trust domain in their SPIFFE ID instead of `caCertificateFile`.
   */
  readonly spiffeTrustBundleMapFile?: string | undefined;
  /** How often the files are re-read (`refresh_interval`, default 10 minutes). */
  readonly refreshIntervalMs: number;
}

export interface CertificateProviderConfig {
  readonly pluginName: 'file_watcher';
  readonly config: FileWatcherConfig;
}

const DEFAULT_REFRESH_INTERVAL_MS = 10 * 60 * 1000;
const FILE_FIELDS = [
  ['certificate_file', 'certificateFile'],
  ['private_key_file', 'privateKeyFile'],
  ['ca_certificate_file', 'caCertificateFile'],
  ['spiffe_trust_bundle_map_file', 'spiffeTrustBundleMapFile'],
] as const;

/**
 * Validates the top-level `certificate_providers`; a missing field is an empty map. Errors are
 * recorded at `certificate_providers["name"].…`.
 */
export function parseCertificateProviders(
  errs: ValidationErrors,
  value: unknown,
): ReadonlyMap<string, CertificateProviderConfig> {
  const providers = new Map<string, CertificateProviderConfig>();
  if (value === undefined) return providers;
  if (!isObject(value)) {
    errs.addAt('certificate_providers', mustBe('an object', value));
    return providers;
  }
  for (const [name, entry] of Object.entries(value)) {
    // Instance names are arbitrary strings: quoted, so that the path stays unambiguous.
    const path = `certificate_providers[${JSON.stringify(name)}]`;
    const provider = errs.field(path, () => parseInstance(errs, entry));
    if (provider !== undefined) providers.set(name, provider);
  }
  return providers;
}

function parseInstance(
  errs: ValidationErrors,
  value: unknown,
): CertificateProviderConfig | undefined {
  if (!isObject(value)) {
    errs.add(mustBe('an object', value));
    return undefined;
  }
  const pluginName = own(value, 'plugin_name');
  if (pluginName === undefined) {
    errs.addAt('plugin_name', 'field not present');
    return undefined;
  }
  if (typeof pluginName !== 'string') {
    errs.addAt('plugin_name', mustBe('a string', pluginName));
    return undefined;
  }
  // Another plugin's config is opaque to us: skipped, as grpc-go does.
  if (pluginName !== 'file_watcher') return undefined;
  const before = errs.count;
  const config = errs.field('config', () => parseFileWatcher(errs, own(value, 'config')));
  return errs.count === before && config ? Object.freeze({ pluginName, config }) : undefined;
}

/**
 * A `tls` channel_creds config (gRFC A65): the file watcher's fields, where none at all may be
 * set (TLS with the system's roots, nothing to watch). Errors are recorded under `errs`.
 */
export function parseTlsCredsConfig(
  errs: ValidationErrors,
  value: Readonly<JsonObject>,
): FileWatcherConfig | undefined {
  return parseFileWatcher(errs, value, { filesOptional: true });
}

function parseFileWatcher(
  errs: ValidationErrors,
  value: unknown,
  { filesOptional = false } = {},
): FileWatcherConfig | undefined {
  const obj = value === undefined ? {} : value;
  if (!isObject(obj)) {
    errs.add(mustBe('an object', obj));
    return undefined;
  }
  const files: Record<string, string | undefined> = {};
  for (const [field, key] of FILE_FIELDS) {
    const file = own(obj, field);
    if (file === undefined) continue;
    if (typeof file !== 'string') errs.addAt(field, mustBe('a string', file));
    else if (file === '') errs.addAt(field, 'must be non-empty');
    else files[key] = file;
  }
  const hasCertificate = own(obj, 'certificate_file') !== undefined;
  if (hasCertificate !== (own(obj, 'private_key_file') !== undefined)) {
    errs.add('certificate_file and private_key_file must both be set or both be unset');
  } else if (
    !filesOptional &&
    !hasCertificate &&
    own(obj, 'ca_certificate_file') === undefined &&
    own(obj, 'spiffe_trust_bundle_map_file') === undefined
  ) {
    errs.add(
      'at least one of certificate_file, ca_certificate_file and spiffe_trust_bundle_map_file must be set',
    );
  }
  // The control-plane channel (A65) verifies its server against CA certificates only: ignoring
  // the map would fall back to the system's roots, a weaker check than asked for.
  if (filesOptional && own(obj, 'spiffe_trust_bundle_map_file') !== undefined) {
    errs.addAt('spiffe_trust_bundle_map_file', 'not supported in tls channel_creds');
  }
  const interval = own(obj, 'refresh_interval');
  let refreshIntervalMs = DEFAULT_REFRESH_INTERVAL_MS;
  if (interval !== undefined) {
    const ms = durationTextMs(interval);
    if (ms === undefined) {
      errs.addAt(
        'refresh_interval',
        `must be a JSON Duration such as "600s" (got ${JSON.stringify(interval)})`,
      );
    } else if (ms <= 0) {
      errs.addAt('refresh_interval', 'must be positive');
    } else if (ms < 1) {
      // Node runs a shorter timer every millisecond: the files would be read 1,000 times a second.
      errs.addAt('refresh_interval', `must be at least 1ms (got ${JSON.stringify(interval)})`);
    } else {
      refreshIntervalMs = ms;
    }
  }
  return Object.freeze({
    certificateFile: files['certificateFile'],
    privateKeyFile: files['privateKeyFile'],
    caCertificateFile: files['caCertificateFile'],
    spiffeTrustBundleMapFile: files['spiffeTrustBundleMapFile'],
    refreshIntervalMs,
  });
}
