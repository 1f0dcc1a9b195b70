// What the server telemetry specs (A66, A72) share: a service of bytes with a unary, a failing,
// a held and a streaming method, an XdsServer serving it under our ManagementServer's Listener,
// and unary calls reporting OK or the status code's name.
import * as grpc from '@grpc/grpc-js';
import { trace } from '@opentelemetry/api';
import { BOOTSTRAP_OPTION, XdsServer } from '../../../lib/grpc';
import {
  serverListener,
  type ManagementServer,
  type ServerListenerOptions,
} from '../../../lib/testing';
import { waitUntil } from './backends';

export const UNARY = '/test.Echo/Echo';
export const FAILING = '/test.Echo/Fail';
export const HELD = '/test.Echo/Held';
export const STREAM = '/test.Echo/Stream';
export const UNKNOWN = '/test.Echo/Unknown';
const TEMPLATE = 'grpc/server?xds.resource.listening_address=%s';
const identity = (b: Buffer) => b;

function method(path: string, streaming = false): grpc.MethodDefinition<Buffer, Buffer> {
  return {
    path,
    requestStream: streaming,
    responseStream: streaming,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  };
}

export const SERVICE: grpc.ServiceDefinition = {
  Echo: method(UNARY),
  Fail: method(FAILING),
  Held: method(HELD),
  Stream: method(STREAM, true),
};

/**
 * Handlers for SERVICE: Echo answers its request twice over (and starts an `app work` span of
 * its own, a child of whatever span is active), Fail fails NOT_FOUND, Held never answers,
 * Stream answers each message thrice over. `handled` lists the paths whose handler ran.
 */
export function serviceHandlers(): {
  handlers: grpc.UntypedServiceImplementation;
  handled: string[];
} {
  const handled: string[] = [];
  return {
    handled,
    handlers: {
      Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
        handled.push(UNARY);
        trace.getTracer('app').startSpan('app work').end();
        done(null, Buffer.concat([call.request, call.request]));
      },
      Fail: (_call: unknown, done: grpc.sendUnaryData<Buffer>) => {
        handled.push(FAILING);
        done({ code: grpc.status.NOT_FOUND, details: 'no such thing' });
      },
      Held: () => handled.push(HELD),
      Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
        handled.push(STREAM);
        call.on('data', (b: Buffer) => call.write(Buffer.concat([b, b, b])));
        call.on('end', () => call.end());
      },
    },
  };
}

/** One unary RPC with a request of `bytes` bytes: OK or the status code's name. */
export function unary(
  client: grpc.Client,
  path: string,
  bytes: number,
  options: { deadlineMs?: number; metadata?: grpc.Metadata } = {},
): Promise<string> {
  return new Promise((resolve) =>
    client.makeUnaryRequest(
      path,
      identity,
      identity,
      Buffer.alloc(bytes, 'a'),
      options.metadata ?? new grpc.Metadata(),
      { deadline: Date.now() + (options.deadlineMs ?? 2000) },
      (e) => resolve(e ? grpc.status[e.code] : 'OK'),
    ),
  );
}

/** A bidi RPC on STREAM sending `messages`: the replies, once the status is OK. */
export function stream(client: grpc.Client, messages: readonly Buffer[]): Promise<Buffer[]> {
  const call = client.makeBidiStreamRequest(STREAM, identity, identity);
  const replies: Buffer[] = [];
  const ended = new Promise<Buffer[]>((resolve, reject) => {
    call.on('data', (b: Buffer) => replies.push(b));
    call.on('status', (s: grpc.StatusObject) =>
      s.code === grpc.status.OK ? resolve(replies) : reject(new Error(s.details)),
    );
  });
  for (const message of messages) call.write(message);
  call.end();
  return ended;
}

/** An XdsServer with SERVICE, bound on 127.0.0.1, and a plain grpc-js client to it. */
export interface ServedXds {
  readonly server: XdsServer;
  readonly client: grpc.Client;
  readonly port: number;
  readonly handled: string[];
  /** Serves with `options`' Listener; resolves once an RPC of 1 byte to UNARY is answered. */
  serve(options?: ServerListenerOptions): Promise<void>;
  close(): void;
}

export async function startXdsServer(management: ManagementServer): Promise<ServedXds> {
  const server = new XdsServer({
    [BOOTSTRAP_OPTION]: JSON.stringify(
      management.bootstrap({ serverListenerResourceNameTemplate: TEMPLATE }),
    ),
  });
  const { handlers, handled } = serviceHandlers();
  server.addService(SERVICE, handlers);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return {
    server,
    client,
    port,
    handled,
    async serve(options = {}) {
      const name = TEMPLATE.replace('%s', `127.0.0.1:${port}`);
      management.setResource('listener', serverListener(name, '127.0.0.1', port, options));
      await waitUntil('the server serves', async () => (await unary(client, UNARY, 1)) === 'OK');
    },
    close() {
      client.close();
      server.forceShutdown();
    },
  };
}
