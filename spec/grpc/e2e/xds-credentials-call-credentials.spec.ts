// End to end: call credentials composed with XdsChannelCredentials go on TLS connections only.
// XdsChannelCredentials choose TLS or their fallback per cluster; on a fallback without TLS an
// RPC that would carry call credentials fails with UNAUTHENTICATED, as grpc-go refuses per-RPC
// credentials on an insecure connection, instead of sending them in clear text.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { XdsChannelCredentials } from '../../../lib/grpc';
import {
  TestCertificateAuthority,
  edsCluster,
  endpoints,
  writeCertificateFiles,
} from '../../../lib/testing';
import { SERVICE, sendRpc, startXdsEnv, type XdsEnv } from '../helpers/xds-env';
import {
  recordingBackend,
  tlsServerCredentials,
  type RecordingBackend,
} from '../helpers/recording-backend';

describe('e2e: call credentials with XdsChannelCredentials', () => {
  let env: XdsEnv;
  let tlsBackend: RecordingBackend;
  let plainBackend: RecordingBackend;

  beforeEach(async () => {
    const ca = TestCertificateAuthority.create();
    tlsBackend = await recordingBackend(tlsServerCredentials(ca, SERVICE));
    plainBackend = await recordingBackend(grpc.ServerCredentials.createInsecure());
    const roots = await writeCertificateFiles({ ca: ca.certificate });
    env = await startXdsEnv([], {}, { certificateProviders: { roots } });
    // Cluster "secure" with an UpstreamTlsContext, cluster "plain" without, chosen by header.
    env.serve({
      routes: ['secure', 'plain'].map((name) => ({
        match: { prefix: '', headers: [{ name: 'x-cluster', exact_match: name }] },
        route: { cluster: name },
      })),
      clusters: [edsCluster('secure', { tls: { caInstance: 'roots' } }), edsCluster('plain')],
      endpoints: [
        endpoints('secure', [{ addresses: [tlsBackend.address] }]),
        endpoints('plain', [{ addresses: [plainBackend.address] }]),
      ],
    });
  });

  afterEach(async () => {
    await env.close();
    tlsBackend.stop();
    plainBackend.stop();
  });

  const to = (cluster: string) => {
    const metadata = new grpc.Metadata();
    metadata.set('x-cluster', cluster);
    return { metadata };
  };

  it('sends composed call credentials on the TLS connections of a cluster and fails RPCs on the insecure fallback', async () => {
    const callCredentials = grpc.credentials.createFromMetadataGenerator((_options, callback) => {
      const metadata = new grpc.Metadata();
      metadata.set('authorization', 'Bearer app-token');
      callback(null, metadata);
    });
    const credentials = new XdsChannelCredentials(grpc.credentials.createInsecure()).compose(
      callCredentials,
    );
    const client = env.client({}, credentials);
    await sendRpc(client, to('secure'));
    assert.deepEqual(tlsBackend.seen, ['Bearer app-token']);
    await assert.rejects(sendRpc(client, to('plain')), {
      code: grpc.status.UNAUTHENTICATED,
      details: /cannot send call credentials on an insecure connection/,
    });
    assert.deepEqual(plainBackend.seen, []);
  });

  it('serves the insecure fallback as before when no call credentials are composed', async () => {
    const client = env.client({}, new XdsChannelCredentials(grpc.credentials.createInsecure()));
    await sendRpc(client, to('plain'));
    await sendRpc(client, to('secure'));
    assert.deepEqual(plainBackend.seen, ['none']);
    assert.deepEqual(tlsBackend.seen, ['none']);
  });
});
