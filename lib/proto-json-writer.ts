// Protobuf bytes -> proto3 JSON, the canonical mapping (lowerCamelCase keys, enum names, int64 as
// strings, Duration "1.5s", Timestamp RFC 3339, Struct as a JSON object, `@type` in Any): what
// REST-JSON xDS puts on the wire, the inverse of lib/proto-json.ts. protobufjs's toObject is not
// this mapping (a Struct comes out as `{ fields }`, a Duration as `{ seconds, nanos }`, an Any as
// bytes). Fields at their default are left out, as proto3 JSON does, except where presence is
// kept (oneof members, message fields).
import type * as protobuf from 'protobufjs';
import { lookupMessageType, typeNameOfUrl } from './codec';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Message = Record<string, unknown>;

/** The message `fullName` decoded from `bytes`, as proto3 JSON. */
export function toProtoJson(fullName: string, bytes: Uint8Array): Json {
  const type = lookupMessageType(fullName);
  if (!type) throw new Error(`no message type ${fullName}`);
  return messageJson(type, type.decode(bytes) as unknown as Message);
}

const WRAPPERS = new Set(
  ['Double', 'Float', 'Int64', 'UInt64', 'Int32', 'UInt32', 'Bool', 'String', 'Bytes'].map(
    (name) => `google.protobuf.${name}Value`,
  ),
);

function messageJson(type: protobuf.Type, message: Message): Json {
  const fullName = type.fullName.slice(1);
  switch (fullName) {
    case 'google.protobuf.Any':
      return anyJson(message);
    case 'google.protobuf.Duration':
      return durationJson(message);
    case 'google.protobuf.Timestamp':
      return timestampJson(message);
    case 'google.protobuf.Struct':
      return structJson(message);
    case 'google.protobuf.Value':
      return valueJson(message);
    case 'google.protobuf.ListValue':
      return ((message['values'] as Message[] | undefined) ?? []).map(valueJson);
  }
  if (WRAPPERS.has(fullName)) return fieldValue(type.fields['value']!, message['value']);
  const out: { [key: string]: Json } = {};
  for (const field of type.fieldsArray) {
    const value = message[field.name];
    if (!isPresent(field, message, value)) continue;
    if (field.map) {
      const entries: { [key: string]: Json } = {};
      for (const [key, item] of Object.entries(value as Message)) {
        entries[key] = fieldValue(field, item);
      }
      out[field.name] = entries;
    } else if (field.repeated) {
      out[field.name] = (value as unknown[]).map((item) => fieldValue(field, item));
    } else {
      out[field.name] = fieldValue(field, value);
    }
  }
  return out;
}

function isPresent(field: protobuf.Field, message: Message, value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (field.map) return Object.keys(value as object).length > 0;
  if (field.repeated) return (value as unknown[]).length > 0;
  // A oneof member is present when it is the one set, whatever its value.
  if (field.partOf) return message[field.partOf.name] === field.name;
  // A message field is present when set, even if all its fields are at their defaults.
  if (isMessageType(field.resolvedType)) return true;
  return !isDefault(value);
}

function isMessageType(type: protobuf.ReflectionObject | null): type is protobuf.Type {
  return type !== null && 'fieldsArray' in type;
}

function isDefault(value: unknown): boolean {
  if (value === 0 || value === '' || value === false) return true;
  if (value instanceof Uint8Array) return value.length === 0;
  if (typeof value === 'object' && value !== null && 'low' in value && 'high' in value) {
    return (
      (value as { low: number; high: number }).low === 0 && (value as { high: number }).high === 0
    );
  }
  return false;
}

function fieldValue(field: protobuf.Field, value: unknown): Json {
  const resolved = field.resolvedType;
  if (isMessageType(resolved)) return messageJson(resolved, value as Message);
  if (resolved) return (resolved as protobuf.Enum).valuesById[value as number] ?? (value as number);
  switch (field.type) {
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      return String(value);
    case 'bytes':
      return Buffer.from(value as Uint8Array).toString('base64');
    case 'double':
    case 'float': {
      const n = value as number;
      return Number.isFinite(n) ? n : String(n);
    }
    default:
      return value as Json;
  }
}

function anyJson(message: Message): Json {
  const typeUrl = String(message['type_url'] ?? message['typeUrl'] ?? '');
  const bytes = (message['value'] as Uint8Array | undefined) ?? new Uint8Array();
  const type = lookupMessageType(typeNameOfUrl(typeUrl));
  if (!type) return { '@type': typeUrl, value: Buffer.from(bytes).toString('base64') };
  const inner = messageJson(type, type.decode(bytes) as unknown as Message);
  // A message whose JSON is not an object (Duration, Struct, a wrapper) sits under "value".
  if (inner === null || typeof inner !== 'object' || Array.isArray(inner) || isWellKnown(type)) {
    return { '@type': typeUrl, value: inner };
  }
  return { '@type': typeUrl, ...inner };
}

function isWellKnown(type: protobuf.Type): boolean {
  return type.fullName.startsWith('.google.protobuf.');
}

function durationJson(message: Message): string {
  const seconds = Number(message['seconds'] ?? 0);
  const nanos = Number(message['nanos'] ?? 0);
  const sign = seconds < 0 || nanos < 0 ? '-' : '';
  const fraction = Math.abs(nanos).toString().padStart(9, '0').replace(/0+$/, '');
  return `${sign}${Math.abs(seconds)}${fraction ? `.${fraction}` : ''}s`;
}

function timestampJson(message: Message): string {
  const ms =
    Number(message['seconds'] ?? 0) * 1000 + Math.floor(Number(message['nanos'] ?? 0) / 1e6);
  return new Date(ms).toISOString();
}

function structJson(message: Message): Json {
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries((message['fields'] as Record<string, Message>) ?? {})) {
    out[key] = valueJson(value);
  }
  return out;
}

function valueJson(value: Message): Json {
  switch (value['kind']) {
    case 'numberValue':
      return value['numberValue'] as number;
    case 'stringValue':
      return value['stringValue'] as string;
    case 'boolValue':
      return value['boolValue'] as boolean;
    case 'structValue':
      return structJson(value['structValue'] as Message);
    case 'listValue':
      return (((value['listValue'] as Message)['values'] as Message[]) ?? []).map(valueJson);
    default:
      return null;
  }
}
