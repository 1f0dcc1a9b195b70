// The protobuf codec. Decoding and encoding run the functions generated at build time into
// lib/generated/decoders.ts and encoders.ts (decision 0060): no protobufjs, no code generated at
// runtime. `fromObject`, `toObject` and the reflection type go through one protobufjs Root built
// from the prebuilt descriptor in lib/generated/descriptor.ts. No .proto text is parsed at
// runtime (decision 0001). Each is loaded on its first use, not at import: a process that
// imports the package pays for them only once it talks xDS, and a client on a gRPC transport
// never loads protobufjs.
import type * as protobuf from 'protobufjs';
import type { Messages } from './generated/protos';
import { WireReader } from './wire-reader';
import { WireWriter } from './wire-writer';

type Decoder = (reader: WireReader, depth: number) => unknown;
type Encoder = (message: unknown, writer: WireWriter, depth: number) => void;
let decoderTable: Readonly<Record<string, Decoder>> | undefined;
let clientEncoderTable: Readonly<Record<string, Encoder | undefined>> | undefined;
let encoderTable: Readonly<Record<string, Encoder>> | undefined;

/**
 * The messages a client sends have encoders of their own (generated/client-encoders.ts), a
 * seventh of the whole: the rest, every resource's, only the testing server and tools load.
 */
function generatedEncoder(fullName: string): Encoder {
  clientEncoderTable ??= (
    require('./generated/client-encoders') as { clientEncoders: Record<string, Encoder> }
  ).clientEncoders;
  const client = clientEncoderTable[fullName];
  if (client) return client;
  encoderTable ??= (require('./generated/encoders') as { encoders: Record<string, Encoder> })
    .encoders;
  const encoder = encoderTable[fullName];
  if (!encoder) throw new Error(`no encoder generated for ${fullName}`);
  return encoder;
}

function generatedDecoder(fullName: string): Decoder {
  decoderTable ??= (require('./generated/decoders') as { decoders: Record<string, Decoder> })
    .decoders;
  const decoder = decoderTable[fullName];
  if (!decoder) throw new Error(`no decoder generated for ${fullName}`);
  return decoder;
}

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
  /**
   * Decodes the message whose bytes run from the reader's position to its `len`: a nested
   * message entered with `reader.enter`, for a reader that decodes the rest itself.
   */
  read(reader: WireReader, depth: number): T;
  /** Loads the generated decoder `decode` will use, without decoding anything. */
  prepareDecode(): void;
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
  let decoder: Decoder | undefined;
  let encoder: Encoder | undefined;
  return {
    fullName,
    get type() {
      return type();
    },
    decode: (bytes) => (decoder ??= generatedDecoder(fullName))(new WireReader(bytes), 0),
    read: (reader, depth) => (decoder ??= generatedDecoder(fullName))(reader, depth),
    prepareDecode: () => {
      decoder ??= generatedDecoder(fullName);
    },
    encode: (message) => {
      const writer = new WireWriter();
      (encoder ??= generatedEncoder(fullName))(message, writer, 0);
      return writer.finish();
    },
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
