// One certificate provider per distinct bootstrap instance config for the whole process, shared
// by every channel, subchannel and server that uses it and stopped with its last user (gRFC
// A29's "deduping and reference counting"). Only `file_watcher` exists; a CA from the system's
// roots (A82's system_root_certs) is a fixed provider.
import { rootCertificates } from 'node:tls';
import type { experimental } from '@grpc/grpc-js';
import type { CertificateProviderConfig } from '../../bootstrap';
import type { FileWatcherCertificateProvider } from '../../client/credentials/certificate-file-watcher';

// Loaded with the first lease: a channel or server without xDS security does not pay for the
// file watcher at import (decision 0095).
type FileWatcherModule = typeof import('../../client/credentials/certificate-file-watcher');
const fileWatcher = (): FileWatcherModule =>
  require('../../client/credentials/certificate-file-watcher') as FileWatcherModule;

type CertificateProvider = experimental.CertificateProvider;

export interface ProviderLease {
  readonly provider: CertificateProvider;
  /** The bootstrap instance name (for errors). */
  readonly name: string;
  /** What is wrong with its files at the last read, if anything. */
  readonly problem: string | undefined;
  /** Idempotent. */
  release(): void;
}

interface Entry {
  readonly provider: FileWatcherCertificateProvider;
  users: number;
}

const providers = new Map<string, Entry>();

/** A use of the provider for this instance config (`name` is for logs). */
export function leaseProvider(name: string, config: CertificateProviderConfig): ProviderLease {
  const key = JSON.stringify(config);
  let entry = providers.get(key);
  if (!entry) {
    const { FileWatcherCertificateProvider } = fileWatcher();
    entry = { provider: new FileWatcherCertificateProvider(config.config, name), users: 0 };
    providers.set(key, entry);
  }
  entry.users++;
  const leased = entry;
  let released = false;
  return {
    provider: leased.provider,
    name,
    get problem() {
      return leased.provider.problem;
    },
    release() {
      if (released) return;
      released = true;
      if (--leased.users > 0) return;
      if (providers.get(key) === leased) providers.delete(key);
      leased.provider.close();
    },
  };
}

/** How many providers are in use (for tests: all released means none). */
export function openProviderCount(): number {
  return providers.size;
}

/** The system's roots as a lease (nothing to release). */
export function systemRootsLease(): ProviderLease {
  return {
    provider: SYSTEM_ROOTS_PROVIDER,
    name: 'system roots',
    problem: undefined,
    release() {},
  };
}

/** The system's trusted roots as a CA provider. */
export const SYSTEM_ROOTS_PROVIDER: CertificateProvider = {
  addCaCertificateListener(listener) {
    const caCertificate = Buffer.from(rootCertificates.join('\n'));
    process.nextTick(() => listener({ caCertificate }));
  },
  removeCaCertificateListener() {},
  addIdentityCertificateListener() {},
  removeIdentityCertificateListener() {},
};
