// What XdsServer specs share: a service with a few methods (one of which holds its answer until
// the test releases it), and unary calls that report 'served' or the failure's status name.
import * as grpc from '@grpc/grpc-js';
import { ECHO_PATH } from './backends';

export const OTHER_PATH = '/test.Echo/Other';
/** Registered, but no route matches it (an unregistered method is UNIMPLEMENTED before routing). */
export const UNROUTED_PATH = '/test.Echo/Unrouted';
/** Answered only when the test releases it: an RPC in flight across a Listener change. */
export const HELD_PATH = '/test.Echo/Held';

const identity = (b: Buffer) => b;

function method(path: string): grpc.MethodDefinition<Buffer, string> {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: (name: string) => Buffer.from(name),
    responseDeserialize: (b: Buffer) => b.toString(),
  };
}

export const SERVICE: grpc.ServiceDefinition = {
  Echo: method(ECHO_PATH),
  Other: method(OTHER_PATH),
  Unrouted: method(UNROUTED_PATH),
  Held: method(HELD_PATH),
};

/** Handlers for SERVICE; `held` lists the answers of Held calls not yet released. */
export function serviceHandlers(): {
  handlers: grpc.UntypedServiceImplementation;
  held: ((reply: string) => void)[];
} {
  const held: ((reply: string) => void)[] = [];
  const answer = (reply: string) => (_call: unknown, done: grpc.sendUnaryData<string>) =>
    done(null, reply);
  return {
    held,
    handlers: {
      Echo: answer('echo'),
      Other: answer('other'),
      Unrouted: answer('unrouted'),
      Held: (_call: unknown, done: grpc.sendUnaryData<string>) =>
        held.push((reply) => done(null, reply)),
    },
  };
}

/** One RPC to `path`: 'served', or the failure's status code name. */
export function call(client: grpc.Client, path = ECHO_PATH, deadlineMs = 1000): Promise<string> {
  return new Promise((resolve) => {
    client.makeUnaryRequest<Buffer, string>(
      path,
      identity,
      (b: Buffer) => b.toString(),
      Buffer.alloc(0),
      new grpc.Metadata(),
      { deadline: Date.now() + deadlineMs },
      (error) => resolve(error ? String(grpc.status[error.code]) : 'served'),
    );
  });
}

/** One RPC to `path` carrying `headers`: 'OK' when served, else the status code's name. */
export function callWithHeaders(
  client: grpc.Client,
  path: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
  return new Promise<string>((resolve) => {
    client.makeUnaryRequest<Buffer, Buffer>(
      path,
      identity,
      identity,
      Buffer.alloc(0),
      metadata,
      { deadline: Date.now() + 2000 },
      (error) => resolve(error ? String(grpc.status[error.code]) : 'OK'),
    );
  });
}

/** The error of one RPC to `path` (which must fail). */
export function rpcError(client: grpc.Client, path: string): Promise<grpc.ServiceError> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest<Buffer, string>(
      path,
      identity,
      (b: Buffer) => b.toString(),
      Buffer.alloc(0),
      new grpc.Metadata(),
      { deadline: Date.now() + 1000 },
      (e) => (e ? resolve(e) : reject(new Error(`${path} was served`))),
    );
  });
}

/** Binds `server` on 127.0.0.1 (a port of the system's choice) and resolves with the port. */
export function bindLoopback(
  server: grpc.Server,
  credentials = grpc.ServerCredentials.createInsecure(),
): Promise<number> {
  return new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', credentials, (e, p) => (e ? reject(e) : resolve(p))),
  );
}
