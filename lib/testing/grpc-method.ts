// The server side of a bidi-streaming method, (de)serialized with our prebuilt codecs.
import type { MethodDefinition } from '@grpc/grpc-js';
import { messageCodec } from '../codec';
import type { Messages } from '../generated/protos';

export function bidiMethod<Req extends keyof Messages, Res extends keyof Messages>(
  path: string,
  requestType: Req,
  responseType: Res,
): MethodDefinition<Messages[Req], Messages[Res]> {
  const requestCodec = messageCodec(requestType);
  const responseCodec = messageCodec(responseType);
  return {
    path,
    requestStream: true,
    responseStream: true,
    requestSerialize: (request) => Buffer.from(requestCodec.encode(request)),
    requestDeserialize: (bytes) => requestCodec.decode(bytes),
    responseSerialize: (response) => Buffer.from(responseCodec.encode(response)),
    responseDeserialize: (bytes) => responseCodec.decode(bytes),
  };
}
