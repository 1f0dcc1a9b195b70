// A backend that records the `authorization` header each RPC brings, for the specs about what
// a client sends where (A83's ID tokens, call credentials): over TLS with a certificate made at
// test time, or in clear text.
import * as grpc from '@grpc/grpc-js';
import type { TestCertificateAuthority } from '../../../lib/testing';
import { ECHO_PATH, unaryMethod } from './backends';

export interface RecordingBackend {
  readonly address: string;
  /** The `authorization` header of each RPC answered ('none' without one). */
  readonly seen: string[];
  stop(): void;
}

/** TLS server credentials with a certificate `ca` issues for the DNS name `name`. */
export function tlsServerCredentials(
  ca: TestCertificateAuthority,
  name: string,
): grpc.ServerCredentials {
  const leaf = ca.issue({ dns: [name] });
  return grpc.ServerCredentials.createSsl(null, [
    { private_key: Buffer.from(leaf.privateKey), cert_chain: Buffer.from(leaf.certificate) },
  ]);
}

/** A backend that records the `authorization` header of every RPC it answers. */
export async function recordingBackend(
  credentials: grpc.ServerCredentials,
): Promise<RecordingBackend> {
  const seen: string[] = [];
  const server = new grpc.Server();
  server.addService(
    { Echo: unaryMethod(ECHO_PATH) },
    {
      Echo: (call: grpc.ServerUnaryCall<Buffer, string>, done: grpc.sendUnaryData<string>) => {
        seen.push(String(call.metadata.get('authorization')[0] ?? 'none'));
        done(null, 'backend');
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', credentials, (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { address: `127.0.0.1:${port}`, seen, stop: () => server.forceShutdown() };
}
