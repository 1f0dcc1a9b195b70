// A87's handshake check on XdsServer relies on where grpc-js keeps the http2 server of a
// connection injector (decision 0059). These specs say whether the grpc-js in use still keeps
// it there (if not, XdsServer falls back to the per-RPC check, with its limits), and that the
// check gives up cleanly when it does not.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { TestCertificateAuthority } from '../../../lib/testing';
// Internal on purpose: the feature detection is not visible through the public API.
import { injectorCheckingClients } from '../../../lib/grpc/server/handshake-check';

function tlsCredentials(): grpc.ServerCredentials {
  const leaf = TestCertificateAuthority.create().issue({ dns: ['localhost'] });
  return grpc.ServerCredentials.createSsl(null, [
    { private_key: Buffer.from(leaf.privateKey), cert_chain: Buffer.from(leaf.certificate) },
  ]);
}

/** The http2 servers a grpc-js Server holds (a private field, hence the cast). */
function http2ServerCount(server: grpc.Server): number {
  return (server as unknown as { http2Servers: Map<unknown, unknown> }).http2Servers.size;
}

describe('XdsServer: the client check in the TLS handshake (A87)', () => {
  it('finds the http2 server behind a connection injector of the grpc-js in use', () => {
    const server = new grpc.Server();
    const injector = injectorCheckingClients(server, tlsCredentials(), () => undefined);
    assert.ok(injector, 'this grpc-js no longer keeps the server where the check looks');
    injector.destroy();
    server.forceShutdown();
  });

  it('gives no injector, and leaves no http2 server behind, when grpc-js keeps its servers elsewhere', () => {
    const server = new grpc.Server();
    const hidden = Object.create(server) as grpc.Server;
    Object.defineProperty(hidden, 'http2Servers', { value: undefined });
    assert.equal(
      injectorCheckingClients(hidden, tlsCredentials(), () => undefined),
      undefined,
    );
    assert.equal(http2ServerCount(server), 0);
    server.forceShutdown();
  });

  it('destroys the injector it made, and leaves no http2 server behind, when that server is not a TLS one', async () => {
    const server = new grpc.Server();
    // Insecure credentials: grpc-js makes a plain http2 server, which the check cannot hook.
    const made = injectorCheckingClients(
      server,
      grpc.ServerCredentials.createInsecure(),
      () => undefined,
    );
    assert.equal(made, undefined);
    // grpc-js forgets a server when it has closed.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(http2ServerCount(server), 0);
    server.forceShutdown();
  });
});
