// A grpc-js backend for the per-call telemetry specs: unary, client-streaming and
// server-streaming methods over raw bytes (so a spec knows every message's size), a behaviour
// (answer, hang, fail the next N RPCs), and the metadata of every RPC it saw (where a trace
// context arrives). Calls on any grpc-js client go through callUnary/callClientStream/…
import * as grpc from '@grpc/grpc-js';
import type { Behaviour } from './backends';

export const UNARY = '/test.Telemetry/Unary';
export const COLLECT = '/test.Telemetry/Collect';
export const FAN = '/test.Telemetry/Fan';

export interface TelemetryBackend {
  readonly address: string;
  behaviour: Behaviour;
  /** The metadata of every RPC received, in order. */
  readonly received: grpc.Metadata[];
  close(): Promise<void>;
}

const identity = (b: Buffer) => b;

function method(path: string, requestStream: boolean, responseStream: boolean) {
  return {
    path,
    requestStream,
    responseStream,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  };
}

const SERVICE: grpc.ServiceDefinition = {
  Unary: method(UNARY, false, false),
  Collect: method(COLLECT, true, false),
  Fan: method(FAN, false, true),
};

export async function startTelemetryBackend(): Promise<TelemetryBackend> {
  const server = new grpc.Server();
  const received: grpc.Metadata[] = [];
  let failed = 0;
  const backend: TelemetryBackend = {
    address: '',
    behaviour: 'answer',
    received,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
  /** Undefined: answer; else the error to fail with (or 'hang'). */
  const outcome = (metadata: grpc.Metadata): 'answer' | 'hang' | grpc.ServiceError => {
    received.push(metadata);
    const b = backend.behaviour;
    if (b === 'answer' || b === 'hang') return b;
    if (b.times !== undefined && failed >= b.times) return 'answer';
    failed++;
    return { code: b.code, details: b.details ?? 'backend fails' } as grpc.ServiceError;
  };
  server.addService(SERVICE, {
    Unary: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
      const o = outcome(call.metadata);
      if (o === 'hang') return;
      if (o === 'answer') done(null, call.request);
      else done(o);
    },
    Collect: (
      call: grpc.ServerReadableStream<Buffer, Buffer>,
      done: grpc.sendUnaryData<Buffer>,
    ) => {
      const parts: Buffer[] = [];
      call.on('data', (b: Buffer) => parts.push(b));
      call.on('end', () => {
        const o = outcome(call.metadata);
        if (o === 'hang') return;
        if (o === 'answer') done(null, Buffer.concat(parts));
        else done(o);
      });
    },
    Fan: (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
      const o = outcome(call.metadata);
      if (o === 'hang') return;
      if (o !== 'answer') {
        call.emit('error', o);
        return;
      }
      for (let i = 0; i < 3; i++) call.write(call.request);
      call.end();
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  (backend as { address: string }).address = `127.0.0.1:${port}`;
  return backend;
}

export interface CallOptions {
  deadlineMs?: number;
  metadata?: grpc.Metadata;
}

function callOptions(options: CallOptions): grpc.CallOptions {
  return { deadline: Date.now() + (options.deadlineMs ?? 5000) };
}

/** A unary RPC with `request`: the backend's answer (the request back), or its error. */
export function callUnary(
  client: grpc.Client,
  request: Buffer,
  options: CallOptions = {},
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      UNARY,
      identity,
      identity,
      request,
      options.metadata ?? new grpc.Metadata(),
      callOptions(options),
      (e, answer) => (e ? reject(e) : resolve(answer!)),
    );
  });
}

/** A client-streaming RPC sending `requests`: the backend answers with them concatenated. */
export function callClientStream(
  client: grpc.Client,
  requests: readonly Buffer[],
  options: CallOptions = {},
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const call = client.makeClientStreamRequest(
      COLLECT,
      identity,
      identity,
      options.metadata ?? new grpc.Metadata(),
      callOptions(options),
      (e, answer) => (e ? reject(e) : resolve(answer!)),
    );
    for (const r of requests) call.write(r);
    call.end();
  });
}

/** A server-streaming RPC: the backend answers with `request` three times. */
export function callServerStream(
  client: grpc.Client,
  request: Buffer,
  options: CallOptions = {},
): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const answers: Buffer[] = [];
    const call = client.makeServerStreamRequest(
      FAN,
      identity,
      identity,
      request,
      options.metadata ?? new grpc.Metadata(),
      callOptions(options),
    );
    call.on('data', (b: Buffer) => answers.push(b));
    call.on('error', reject);
    call.on('end', () => resolve(answers));
  });
}
