// The CSDS service (gRFC A40) on a grpc-js server: FetchClientStatus answers once,
// StreamClientStatus answers each request of the stream. Requests are decoded in the handler,
// so a malformed one is INVALID_ARGUMENT rather than an error inside grpc-js.
import {
  status,
  type sendUnaryData,
  type Server,
  type ServerDuplexStream,
  type ServerUnaryCall,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { openXdsClients, type XdsClientCore } from '../client/core/client-core';
import { messageCodec } from '../codec';
import type { ClientStatusResponse } from '../generated/protos';
import { clientStatusResponse } from './client-status';

const SERVICE = 'envoy.service.status.v3.ClientStatusDiscoveryService';
const requestCodec = messageCodec('envoy.service.status.v3.ClientStatusRequest');
const responseCodec = messageCodec('envoy.service.status.v3.ClientStatusResponse');

/** The clients to report: a list, or a function asked on every request. */
export type CsdsClients = readonly XdsClientCore[] | (() => readonly XdsClientCore[]);

const raw = (bytes: Buffer): Buffer => bytes;
const encodeResponse = (response: ClientStatusResponse): Buffer =>
  Buffer.from(responseCodec.encode(response));

function method(name: string, streaming: boolean) {
  return {
    path: `/${SERVICE}/${name}`,
    requestStream: streaming,
    responseStream: streaming,
    requestSerialize: raw,
    requestDeserialize: raw,
    responseSerialize: encodeResponse,
    responseDeserialize: (bytes: Buffer) => responseCodec.decode(bytes),
  };
}

/** The service's methods, for `server.addService` or grpc-js's admin services. */
export const CSDS_SERVICE_DEFINITION: ServiceDefinition = {
  StreamClientStatus: method('StreamClientStatus', true),
  FetchClientStatus: method('FetchClientStatus', false),
};

class CsdsRequestError extends Error {
  readonly code = status.INVALID_ARGUMENT;
}

/** Adds the service to `server` (the public `addCsdsService`, index.ts, loads this module). */
export function addCsdsService(server: Server, clients: CsdsClients = openXdsClients): void {
  server.addService(CSDS_SERVICE_DEFINITION, csdsHandlers(clients));
}

/** The handlers of the service, reporting `clients`. */
export function csdsHandlers(clients: CsdsClients = openXdsClients): UntypedServiceImplementation {
  const current = typeof clients === 'function' ? clients : () => clients;
  const answer = (bytes: Buffer): ClientStatusResponse => {
    let request;
    try {
      request = requestCodec.decode(bytes);
    } catch (e) {
      throw new CsdsRequestError(
        `malformed ClientStatusRequest: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    // A process answers for its own clients only; matching nodes is a control plane's job.
    if (request.nodeMatchers.length > 0) {
      throw new CsdsRequestError('node_matchers are not supported: this process has one node');
    }
    return clientStatusResponse(current(), request.excludeResourceContents);
  };
  return {
    FetchClientStatus(
      call: ServerUnaryCall<Buffer, ClientStatusResponse>,
      done: sendUnaryData<ClientStatusResponse>,
    ) {
      try {
        done(null, answer(call.request));
      } catch (e) {
        done(asServiceError(e));
      }
    },
    StreamClientStatus(call: ServerDuplexStream<Buffer, ClientStatusResponse>) {
      call.on('data', (bytes: Buffer) => {
        try {
          call.write(answer(bytes));
        } catch (e) {
          call.emit('error', asServiceError(e));
        }
      });
      call.on('end', () => call.end());
    },
  };
}

function asServiceError(e: unknown): { code: status; details: string } {
  if (e instanceof CsdsRequestError) return { code: e.code, details: e.message };
  return { code: status.INTERNAL, details: e instanceof Error ? e.message : String(e) };
}
