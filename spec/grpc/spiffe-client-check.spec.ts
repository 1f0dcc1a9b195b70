// gRFC A87's client check on each RPC: XdsServer's fallback where it cannot check the TLS
// handshake (decision 0044; with this grpc-js the handshake check runs, so the e2e specs do not
// reach this path). On a real grpc-js server with the check's interceptor: clients of two
// certificates on connections of their own, RPCs interleaved, each judged on its own
// certificate however many RPCs came before (the check is remembered per certificate), and a
// new trust bundle map judged afresh.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { CaUpdate } from '../../lib/client/credentials/certificate-file-watcher';
import type { SpiffeBundleMap } from '../../lib/client/credentials/spiffe-bundle-map';
import type { ProviderLease } from '../../lib/grpc/certificates/provider-store';
import { spiffeClientCheck } from '../../lib/grpc/certificates/spiffe-client-check';
import { TestCertificateAuthority } from '../../lib/testing';
import { PEER_ECHO_HANDLERS, PEER_ECHO_SERVICE, peerCall } from './helpers/peer-echo';

/** A certificate provider lease whose CA updates the spec sends. */
function fakeLease() {
  let listener: ((update: CaUpdate | null) => void) | undefined;
  const provider = {
    addCaCertificateListener: (l: typeof listener) => (listener = l),
    removeCaCertificateListener: () => (listener = undefined),
  };
  const lease = { provider, name: 'roots', problem: undefined, release() {} };
  return {
    lease: lease as unknown as ProviderLease,
    send(map: SpiffeBundleMap) {
      listener!({ caCertificate: Buffer.alloc(0), spiffeBundleMap: map } as CaUpdate);
    },
  };
}

describe('SPIFFE client check on each RPC (gRFC A87, the fallback of decision 0044)', () => {
  const domainA = TestCertificateAuthority.create('a.example CA');
  const domainB = TestCertificateAuthority.create('b.example CA');
  const rootA = new X509Certificate(domainA.certificate);
  const rootB = new X509Certificate(domainB.certificate);
  const { lease, send } = fakeLease();
  const check = spiffeClientCheck(lease);
  const server = new grpc.Server();
  const clients: grpc.Client[] = [];
  let port = 0;

  before(async () => {
    const identity = domainA.issue({ dns: ['localhost'] });
    const credentials = grpc.ServerCredentials.createSsl(
      Buffer.from(domainA.certificate + domainB.certificate),
      [
        {
          cert_chain: Buffer.from(identity.certificate),
          private_key: Buffer.from(identity.privateKey),
        },
      ],
      true,
    );
    server.addService(PEER_ECHO_SERVICE, PEER_ECHO_HANDLERS);
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(
        '127.0.0.1:0',
        grpc.experimental.createServerCredentialsWithInterceptors(credentials, [check.interceptor]),
        (error, bound) => (error ? reject(error) : resolve(bound)),
      ),
    );
  });

  after(() => {
    for (const client of clients) client.close();
    check.stop();
    server.forceShutdown();
  });

  /** A client whose certificate, issued by `ca`, names `spiffeId`. */
  function clientOf(ca: TestCertificateAuthority, spiffeId: string): grpc.Client {
    const own = ca.issue({ uris: [spiffeId] });
    const client = new grpc.Client(
      `127.0.0.1:${port}`,
      grpc.credentials.createSsl(
        Buffer.from(domainA.certificate),
        Buffer.from(own.privateKey),
        Buffer.from(own.certificate),
      ),
      { 'grpc.ssl_target_name_override': 'localhost', 'grpc.use_local_subchannel_pool': 1 },
    );
    clients.push(client);
    return client;
  }

  it('judges each RPC by its own connection’s certificate, and each new bundle map afresh', async () => {
    send(
      new Map([
        ['a.example', [rootA]],
        ['b.example', [rootB]],
      ]),
    );
    const trusted = clientOf(domainA, 'spiffe://a.example/one');
    // Claims domain a, issued by domain b's CA: the handshake accepts it (both CAs), A87 not.
    const impostor = clientOf(domainB, 'spiffe://a.example/two');
    const answers: string[] = [];
    for (let i = 0; i < 3; i++) {
      answers.push(await peerCall(trusted), await peerCall(impostor, { withDetails: true }));
    }
    const refused =
      'UNAVAILABLE: XdsServer: client certificate refused: SPIFFE verification failed: the peer ' +
      'certificate does not chain to a root of trust domain "a.example"';
    assert.deepEqual(answers, Array(3).fill(['peer URI:spiffe://a.example/one', refused]).flat());

    // A map without domain a: the client that passed before is judged again, and refused.
    send(new Map([['b.example', [rootB]]]));
    assert.match(
      await peerCall(trusted, { withDetails: true }),
      /^UNAVAILABLE: .*trust domain "a\.example" is not in the SPIFFE trust bundle map$/,
    );
    send(new Map([['a.example', [rootA]]]));
    assert.equal(await peerCall(trusted), 'peer URI:spiffe://a.example/one');
  });
});
