// gRFC A29's `file_watcher` certificate provider: reads PEM files now and every refresh
// interval while anyone listens, and hands listeners what it read. It implements grpc-js's
// CertificateProvider interface, so grpc-js's certificate-provider credentials consume it, but
// is our own (decision 0015): a failed read names the file and keeps the last good
// certificates, a certificate and a key that do not belong together are not used, listeners
// hear only of changes, and its timer never keeps the process alive.
import { readFile } from 'node:fs/promises';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import type { experimental } from '@grpc/grpc-js';
import type { FileWatcherConfig } from '../../bootstrap';
import { logError, tracer } from '../../trace';
import { parseSpiffeBundleMap, type SpiffeBundleMap } from './spiffe-bundle-map';

/**
 * What CA listeners hear. With a SPIFFE trust bundle map (gRFC A87) the update also carries the
 * map, and `caCertificate` holds every trust domain's roots, which grpc-js's TLS verifies
 * against before the trust domain's own roots are checked (spiffe-verification.ts).
 */
export interface CaUpdate extends experimental.CaCertificateUpdate {
  readonly spiffeBundleMap?: SpiffeBundleMap;
}
type IdentityUpdate = experimental.IdentityCertificateUpdate;
type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

const trace = tracer('xds_client_certificates');

export class FileWatcherCertificateProvider implements experimental.CertificateProvider {
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();
  /**
   * The last good read; null when none has succeeded yet but one failed (so that grpc-js fails
   * connections instead of waiting), undefined before the first read.
   */
  private ca: CaUpdate | null | undefined;
  private identity: IdentityUpdate | null | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  /** The last problem logged, so a file that stays broken is reported once. */
  private lastError: string | undefined;
  /** The last read's problems, for connections that fail for want of certificates. */
  private problems: string | undefined;

  constructor(
    private readonly config: FileWatcherConfig,
    /** How the provider is named in logs: its bootstrap instance name. */
    private readonly name: string,
  ) {}

  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    this.start();
    const ca = this.ca;
    if (ca !== undefined) process.nextTick(() => this.caListeners.has(listener) && listener(ca));
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
    this.maybeStop();
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    this.start();
    const identity = this.identity;
    if (identity !== undefined) {
      process.nextTick(() => this.identityListeners.has(listener) && listener(identity));
    }
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
    this.maybeStop();
  }

  /** What is wrong with the files at the last read, naming them (undefined: nothing). */
  get problem(): string | undefined {
    return this.problems;
  }

  /** Stops reading; listeners stay registered but hear nothing more. */
  close(): void {
    this.caListeners.clear();
    this.identityListeners.clear();
    this.maybeStop();
  }

  private start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.refresh(), this.config.refreshIntervalMs);
    this.timer.unref();
    void this.refresh();
  }

  private maybeStop(): void {
    if (this.caListeners.size > 0 || this.identityListeners.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Reads every configured file once; never throws. */
  private async refresh(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const { certificateFile, privateKeyFile, spiffeTrustBundleMapFile } = this.config;
      // A87: the map, when configured, replaces the CA file (which older gRPCs read instead).
      const caFile = spiffeTrustBundleMapFile ?? this.config.caCertificateFile;
      const problems: string[] = [];
      const [certificate, privateKey, caContents] = await Promise.all(
        [certificateFile, privateKeyFile, caFile].map((file) => read(file, problems)),
      );
      if (!this.timer) return; // stopped while reading
      if (caFile !== undefined) {
        const ca =
          caContents &&
          (spiffeTrustBundleMapFile === undefined
            ? caCertificates(caContents, caFile)
            : spiffeRoots(caContents, caFile));
        if (ca && !('problem' in ca)) this.setCa(ca);
        else {
          if (ca) problems.push(ca.problem);
          if (!this.ca) this.setCa(null);
        }
      }
      if (certificateFile !== undefined && privateKeyFile !== undefined) {
        const problem =
          certificate &&
          privateKey &&
          checkIdentity(certificate, certificateFile, privateKey, privateKeyFile);
        if (certificate && privateKey && !problem) this.setIdentity({ certificate, privateKey });
        else {
          if (problem) problems.push(problem);
          if (!this.identity) this.setIdentity(null);
        }
      }
      this.report(problems);
    } finally {
      this.reading = false;
    }
  }

  private report(problems: readonly string[]): void {
    this.problems = problems.length === 0 ? undefined : problems.join('; ');
    if (problems.length === 0) {
      this.lastError = undefined;
      return;
    }
    const text = `certificate provider "${this.name}" (file_watcher): ${problems.join('; ')}; keeping the last good certificates`;
    if (text === this.lastError) return;
    this.lastError = text;
    logError(text);
  }

  private setCa(update: CaUpdate | null): void {
    if (update === this.ca) return;
    if (update && sameCa(this.ca, update)) return;
    this.ca = update;
    const what = update?.spiffeBundleMap ? 'new SPIFFE trust bundle map' : 'new CA certificates';
    trace.log(`"${this.name}": ${update ? what : 'no CA certificates'}`);
    for (const listener of this.caListeners) listener(update);
  }

  private setIdentity(update: IdentityUpdate | null): void {
    const old = this.identity;
    if (update === old) return;
    if (
      update &&
      old?.certificate.equals(update.certificate) &&
      old.privateKey.equals(update.privateKey)
    ) {
      return;
    }
    this.identity = update;
    trace.log(`"${this.name}": ${update ? 'new identity certificate' : 'no identity certificate'}`);
    for (const listener of this.identityListeners) listener(update);
  }
}

async function read(file: string | undefined, problems: string[]): Promise<Buffer | undefined> {
  if (file === undefined) return undefined;
  try {
    return await readFile(file);
  } catch (e) {
    problems.push(`cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  }
}

type CaRead = CaUpdate | { readonly problem: string };

/** A PEM CA file as an update, or why it is not usable. */
function caCertificates(pem: Buffer, file: string): CaRead {
  try {
    new X509Certificate(pem);
    return { caCertificate: pem };
  } catch (e) {
    return { problem: `${file}: not a PEM certificate: ${errorMessage(e)}` };
  }
}

/** A SPIFFE trust bundle map file as an update, or why it is not usable (naming the field). */
function spiffeRoots(json: Buffer, file: string): CaRead {
  const map = parseSpiffeBundleMap(json.toString('utf8'));
  if ('errors' in map) {
    return { problem: `spiffe_trust_bundle_map_file ${file}: ${map.errors}` };
  }
  const pems = [...map.values()].flat().map((root) => root.toString());
  return { caCertificate: Buffer.from(pems.join('\n')), spiffeBundleMap: map };
}

/** The same CA certificates, or the same map's contents (a refresh that read the same file). */
function sameCa(old: CaUpdate | null | undefined, update: CaUpdate): boolean {
  if (!old || !old.caCertificate.equals(update.caCertificate)) return false;
  const [a, b] = [old.spiffeBundleMap, update.spiffeBundleMap];
  if (!a || !b) return a === b;
  const key = (map: SpiffeBundleMap) =>
    JSON.stringify([...map].map(([domain, roots]) => [domain, roots.map((r) => r.fingerprint256)]));
  return key(a) === key(b);
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Why a certificate and key are not usable together, or undefined. A rotation writes two
 * files: read between the writes, they do not match, and the next refresh sees both.
 */
function checkIdentity(
  certificate: Buffer,
  certificateFile: string,
  privateKey: Buffer,
  privateKeyFile: string,
): string | undefined {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(certificate);
  } catch (e) {
    return `${certificateFile}: not a PEM certificate: ${e instanceof Error ? e.message : String(e)}`;
  }
  try {
    const key = createPrivateKey(privateKey);
    if (!x509.checkPrivateKey(key)) {
      return `${privateKeyFile} is not the private key of ${certificateFile}`;
    }
  } catch (e) {
    return `${privateKeyFile}: not a PEM private key: ${e instanceof Error ? e.message : String(e)}`;
  }
  return undefined;
}
