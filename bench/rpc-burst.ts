// A closed loop of unary RPCs on ECHO_METHOD, for the benches that drive one channel from their
// own process (rpc-hot.ts, rpc-server.ts): each answer starts the next RPC.
import type * as grpc from '@grpc/grpc-js';
import { ECHO_METHOD } from './rpc-protocol';

export const identity = (bytes: Buffer): Buffer => bytes;
const PAYLOAD = Buffer.from('ping');

/** Sends `total` RPCs on `client`, `concurrency` in flight; rejects with the first error. */
export function burst(client: grpc.Client, total: number, concurrency: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let started = 0;
    let done = 0;
    const next = (): void => {
      started++;
      client.makeUnaryRequest(ECHO_METHOD, identity, identity, PAYLOAD, (error) => {
        if (error) return reject(error);
        if (++done === total) resolve();
        else if (started < total) next();
      });
    };
    for (let i = 0; i < Math.min(concurrency, total); i++) next();
  });
}
