// `tls` channel creds to the management server (gRFC A65) against a real mTLS ManagementServer:
// the client presents its certificate and verifies the server's; a key that is not the
// certificate's is refused at construction; and after the control plane and the client both
// rotate to a new CA — the server restarted with new certificates, the client's files rewritten
// — the client reconnects with the new files, without being rebuilt.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { XdsClient, isXdsError, type ClusterUpdate } from '../../lib';
import {
  ManagementServer,
  TestCertificateAuthority,
  edsCluster,
  writeCertificateFiles,
} from '../../lib/testing';
import { RecordingWatcher } from '../helpers/recording-watcher';

/** A CA, a server certificate for 127.0.0.1 and a client certificate. */
function pki(name: string) {
  const ca = TestCertificateAuthority.create(`${name} CA`);
  return {
    ca,
    server: ca.issue({ ips: ['127.0.0.1'] }),
    client: ca.issue({ uris: [`spiffe://${name}/client`] }),
  };
}

describe('tls channel creds to the management server (gRFC A65)', () => {
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function start(p: ReturnType<typeof pki>, port?: number) {
    const server = await ManagementServer.start({
      tls: {
        certificate: p.server.certificate,
        privateKey: p.server.privateKey,
        clientCa: p.ca.certificate,
      },
      ...(port === undefined ? {} : { port }),
    });
    cleanup.push(() => server.close());
    server.setResources('cluster', [edsCluster('A')]);
    return server;
  }

  it('a65 connects with mtls and reconnects after both sides rotate', async () => {
    const first = pki('first');
    let management = await start(first);
    const files = await writeCertificateFiles({ identity: first.client, ca: first.ca.certificate });
    const client = new XdsClient({
      bootstrap: management.bootstrap({
        channelCreds: [
          {
            type: 'tls',
            config: {
              ca_certificate_file: files.caCertificateFile,
              certificate_file: files.certificateFile,
              private_key_file: files.privateKeyFile,
              refresh_interval: '0.05s',
            },
          },
        ],
      }),
    });
    cleanup.push(() => client.close());
    const watcher = new RecordingWatcher<ClusterUpdate>();
    client.watchCluster('A', watcher);
    await watcher.next('changed');

    // The control plane restarts on the same port with certificates of a new CA, trusting only
    // clients of that CA; the client's files are rewritten with the new CA and identity.
    const port = Number(management.address.split(':')[1]);
    await management.close();
    const second = pki('second');
    await writeCertificateFiles({ identity: second.client, ca: second.ca.certificate }, files.dir);
    management = await start(second, port);
    const request = await management.waitForRequest((r) => r.resourceNames.includes('A'), {
      timeoutMs: 10_000,
    });
    assert.equal(request.node?.id, 'test-node', 'the same client, reconnected over mTLS');
  });

  it('a65 refuses at construction a key that is not the certificates', async () => {
    const p = pki('mismatch');
    const other = p.ca.issue({ uris: ['spiffe://mismatch/other'] });
    const files = await writeCertificateFiles({ identity: p.client, ca: p.ca.certificate });
    const otherFiles = await writeCertificateFiles({ identity: other });
    let caught: unknown;
    try {
      new XdsClient({
        bootstrap: {
          xds_servers: [
            {
              server_uri: '127.0.0.1:1',
              channel_creds: [
                {
                  type: 'tls',
                  config: {
                    certificate_file: files.certificateFile,
                    private_key_file: otherFiles.privateKeyFile,
                  },
                },
              ],
            },
          ],
          node: { id: 'n' },
        },
      });
    } catch (e) {
      caught = e;
    }
    assert.ok(isXdsError(caught));
    assert.match(
      caught.message,
      /xds_servers\[0\]\.channel_creds \(tls\): config\.private_key_file ".*" is not the key of config\.certificate_file/,
    );
  });
});
