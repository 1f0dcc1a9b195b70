// The protobuf codec: one protobufjs Root built from the prebuilt descriptor in
// lib/generated/descriptor.ts. No .proto text is parsed at runtime (see docs/decisions/0001).
// protobufjs, the descriptor and the Root are loaded on the first encode or decode, not at
// import: a process that imports the package pays for them only once it talks xDS.
import type * as protobuf from 'protobufjs';
import type { Messages } from './generated/protos';

let builtRoot: protobuf.Root | undefined;

function root(): protobuf.Root {
  if (!builtRoot) {
    const library = require('protobufjs') as typeof protobuf;
    const { descriptor } = require('./generated/descriptor') as { descriptor: unknown };
    builtRoot = library.Root.fromJSON(descriptor as protobuf.INamespace);
  }
  return builtRoot;
}

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

/**
 * A codec whose reflection type is looked up on first use (modules create codecs at load). Its
 * methods are closures, not prototype methods: callers pass `codec.decode` around on its own.
 */
function lazyCodec(fullName: string): MessageCodec<unknown> {
  let resolved: protobuf.Type | undefined;
  const type = (): protobuf.Type => (resolved ??= root().lookupType(fullName));
  return {
    fullName,
    get type() {
      return type();
    },
    decode: (bytes) => type().decode(bytes),
    encode: (message) =>
      type()
        .encode(message as protobuf.Message)
        .finish(),
    fromObject: (object) => type().fromObject(object),
    toObject: (message, options) => type().toObject(message as protobuf.Message, options),
  };
}

const codecs = new Map<string, MessageCodec<unknown>>();

export function messageCodec<K extends keyof Messages>(fullName: K): MessageCodec<Messages[K]> {
  let codec = codecs.get(fullName);
  if (!codec) {
    codec = lazyCodec(fullName);
    codecs.set(fullName, codec);
  }
  return codec as MessageCodec<Messages[K]>;
}

/** Looks a message type up by full name (for Any payloads named at runtime). */
export function lookupMessageType(fullName: string): protobuf.Type | undefined {
  try {
    return root().lookupType(fullName);
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
