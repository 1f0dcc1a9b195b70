// The protobuf codec: one protobufjs Root built from the prebuilt descriptor in
// lib/generated/protos.ts. No .proto text is parsed at runtime (see docs/decisions/0001).
import * as protobuf from 'protobufjs';
import { descriptor, type Messages } from './generated/protos';

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);

/** Encode/decode for one message type, typed with its generated interface. */
export interface MessageCodec<T> {
  readonly fullName: string;
  /** Decodes bytes; throws on malformed input (callers turn that into an XdsError). */
  decode(bytes: Uint8Array): T;
  encode(message: T): Uint8Array;
  /** Builds a message from a plain object with protobufjs's camelCase field names. */
  fromObject(object: Record<string, unknown>): T;
  toObject(message: T, options?: protobuf.IConversionOptions): Record<string, unknown>;
  /** The protobufjs reflection type, for tools that need it (the testing JSON mapper). */
  readonly type: protobuf.Type;
}

const codecs = new Map<string, MessageCodec<unknown>>();

export function messageCodec<K extends keyof Messages>(fullName: K): MessageCodec<Messages[K]> {
  let codec = codecs.get(fullName);
  if (!codec) {
    const type = root.lookupType(fullName);
    codec = {
      fullName,
      type,
      decode: (bytes) => type.decode(bytes),
      encode: (message) => type.encode(message as protobuf.Message).finish(),
      fromObject: (object) => type.fromObject(object),
      toObject: (message, options) => type.toObject(message as protobuf.Message, options),
    };
    codecs.set(fullName, codec);
  }
  return codec as MessageCodec<Messages[K]>;
}

/** Looks a message type up by full name (for Any payloads named at runtime). */
export function lookupMessageType(fullName: string): protobuf.Type | undefined {
  try {
    return root.lookupType(fullName);
  } catch {
    return undefined;
  }
}

export const TYPE_URL_PREFIX = 'type.googleapis.com/';

/** `type.googleapis.com/envoy.config.cluster.v3.Cluster` -> `envoy.config.cluster.v3.Cluster`. */
export function typeNameOfUrl(typeUrl: string): string {
  const slash = typeUrl.lastIndexOf('/');
  return slash < 0 ? typeUrl : typeUrl.slice(slash + 1);
}
