// Imported first by google-default.spec.ts, before grpc-js loads: grpc-js reads
// GRPC_DEFAULT_SSL_ROOTS_FILE_PATH once, at load, for the roots of credentials.createSsl() —
// which `google_default` uses — so the test's CA must be in place by then. Also writes a
// service account key for Application Default Credentials.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestCertificateAuthority } from '../../lib/testing/certificates';

export const dir = mkdtempSync(join(tmpdir(), 'xds-client-google-'));
export const ca = TestCertificateAuthority.create('google default test CA');
export const rootsFile = join(dir, 'roots.pem');
writeFileSync(rootsFile, ca.certificate);
process.env['GRPC_DEFAULT_SSL_ROOTS_FILE_PATH'] = rootsFile;

export const SERVICE_ACCOUNT = 'xds-client-test@example-project.iam.gserviceaccount.com';
export const serviceAccountFile = join(dir, 'service-account.json');
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
writeFileSync(
  serviceAccountFile,
  JSON.stringify({
    type: 'service_account',
    project_id: 'example-project',
    private_key_id: 'test-key',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    client_email: SERVICE_ACCOUNT,
    client_id: '1',
    token_uri: 'https://oauth2.googleapis.com/token',
  }),
);
