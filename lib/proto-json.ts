// Proto3 JSON -> protobuf bytes: for the FILESYSTEM transport's files, and for tests that write
// resources as the JSON people already know from Envoy and go-control-plane configs (shared, so
// that both layers use it; xds-client/testing re-exports it from testing/json-message.ts). Built on lib/codec's protobufjs types (no .proto
// parsing). protobufjs's own fromObject is lenient: it drops unknown keys and knows neither
// Duration strings nor `@type`, so a typo would silently become a default value. Here every
// key is checked and an error names the JSON path and the message type.
import * as protobuf from 'protobufjs';
import { lookupMessageType, typeNameOfUrl } from './codec';

type JsonObject = Readonly<Record<string, unknown>>;
/** What protobufjs's `Type.fromObject` accepts: camelCase keys, numbers for enums. */
type PbObject = Record<string, unknown>;

export interface ToMessageOptions {
  /** Where the JSON sits, to prefix error paths (`cluster[0]`). Default: none. */
  path?: string;
}

/**
 * Encodes proto3 JSON as the named message. `typeUrlOrFullName` is a type URL
 * (`type.googleapis.com/envoy.config.cluster.v3.Cluster`) or a full message name. Keys may be
 * snake_case or lowerCamelCase. Throws an Error naming the JSON path on any problem.
 */
export function toMessageBytes(
  typeUrlOrFullName: string,
  json: unknown,
  options: ToMessageOptions = {},
): Uint8Array {
  const path = options.path ?? '';
  const type = requireType(typeUrlOrFullName, path);
  return encode(type, convertMessage(type, withoutOwnType(type, json, path), path));
}

/** A resource ready to serve: its name (for subscriptions) and its bytes. */
export interface EncodedResource {
  readonly name: string;
  readonly bytes: Uint8Array;
}

/**
 * Encodes a resource and reads its name: field `name`, or `cluster_name` for messages without
 * one (ClusterLoadAssignment), as xDS servers key them.
 */
export function toResource(typeUrl: string, json: unknown, path: string): EncodedResource {
  const type = requireType(typeUrl, path);
  const message = type.fromObject(convertMessage(type, withoutOwnType(type, json, path), path));
  const nameField = NAME_FIELDS.find((field) => ownField(type, field));
  if (nameField === undefined) {
    throw new Error(`${at(path)}${fullNameOf(type)} has no name field: pass { name, bytes }`);
  }
  const name = (message as unknown as PbObject)[nameField];
  if (typeof name !== 'string' || name === '') {
    throw new Error(`${at(path)}a resource needs a non-empty ${snakeCase(nameField)}`);
  }
  return { name, bytes: type.encode(message).finish() };
}

/** Where xDS servers find a resource's name, in protobufjs's field names. */
const NAME_FIELDS = ['name', 'clusterName'] as const;

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * Resources copied from a config dump carry their own `@type`: accept it when it names the
 * message being encoded, so such JSON can be pasted as it is.
 */
function withoutOwnType(type: protobuf.Type, json: unknown, path: string): unknown {
  const fullName = fullNameOf(type);
  if (!isObject(json) || !('@type' in json) || fullName === 'google.protobuf.Any') return json;
  const { '@type': typeUrl, ...fields } = json;
  if (typeof typeUrl !== 'string' || typeNameOfUrl(typeUrl) !== fullName) {
    throw new Error(`${join(path, '@type')}: expected ${fullName}, got ${describe(typeUrl)}`);
  }
  return fields;
}

function requireType(typeUrlOrFullName: string, path: string): protobuf.Type {
  const fullName = typeNameOfUrl(typeUrlOrFullName);
  const type = lookupMessageType(fullName);
  if (!type) throw new Error(`${at(path)}unknown message type "${fullName}" (not in protos/)`);
  return type;
}

function encode(type: protobuf.Type, object: PbObject): Uint8Array {
  return type.encode(type.fromObject(object)).finish();
}

function fullNameOf(type: protobuf.ReflectionObject): string {
  return type.fullName.startsWith('.') ? type.fullName.slice(1) : type.fullName;
}

function at(path: string): string {
  return path ? `${path}: ` : '';
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value instanceof Uint8Array) return 'bytes';
  if (typeof value === 'bigint' || typeof value === 'function') return typeof value;
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function isObject(value: unknown): value is JsonObject {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof Uint8Array)
  );
}

function fail(path: string, expected: string, got: unknown): never {
  throw new Error(`${at(path)}expected ${expected}, got ${describe(got)}`);
}

// ---- messages ----

const WRAPPERS = new Set(
  ['Double', 'Float', 'Int64', 'UInt64', 'Int32', 'UInt32', 'Bool', 'String', 'Bytes'].map(
    (kind) => `google.protobuf.${kind}Value`,
  ),
);
/** Types whose JSON form is not an object of fields: inside an Any they sit under "value". */
const SPECIAL_JSON = new Set([
  ...WRAPPERS,
  'google.protobuf.Duration',
  'google.protobuf.Timestamp',
  'google.protobuf.Struct',
  'google.protobuf.Value',
  'google.protobuf.ListValue',
  'google.protobuf.Any',
]);

function convertMessage(type: protobuf.Type, json: unknown, path: string): PbObject {
  const fullName = fullNameOf(type);
  switch (fullName) {
    case 'google.protobuf.Any':
      return convertAny(json, path);
    case 'google.protobuf.Duration':
      if (typeof json === 'string') return parseDuration(json, path);
      if (!isObject(json)) fail(path, 'a duration like "1.5s"', json);
      break;
    case 'google.protobuf.Timestamp':
      if (typeof json === 'string') return parseTimestamp(json, path);
      if (!isObject(json)) fail(path, 'an RFC 3339 timestamp', json);
      break;
    case 'google.protobuf.Struct':
      return convertStruct(json, path);
    case 'google.protobuf.Value':
      return convertValue(json, path);
    case 'google.protobuf.ListValue':
      if (!Array.isArray(json)) fail(path, 'a JSON array for google.protobuf.ListValue', json);
      return { values: json.map((item, i) => convertValue(item, `${path}[${i}]`)) };
    default:
      // Wrappers are plain scalars in proto3 JSON; `{ value }` is accepted too.
      if (WRAPPERS.has(fullName) && !isObject(json)) {
        return { value: convertField(fieldOf(type, 'value'), json, path) };
      }
  }
  if (!isObject(json)) fail(path, `a JSON object for ${fullName}`, json);
  const out: PbObject = {};
  const oneofSeen = new Map<string, string>();
  for (const [key, value] of Object.entries(json)) {
    const keyPath = join(path, key);
    const field = findField(type, key);
    if (!field) throw new Error(`${keyPath}: no such field in ${fullName}`);
    // proto3 JSON: null means "not set", except for google.protobuf.Value (null_value).
    if (value === null && !isValueType(field)) continue;
    const oneof = field.partOf;
    if (oneof) {
      const other = oneofSeen.get(oneof.name);
      if (other !== undefined) {
        throw new Error(
          `${keyPath}: oneof ${snakeCase(oneof.name)} of ${fullName} already set by "${other}"`,
        );
      }
      oneofSeen.set(oneof.name, key);
    }
    out[field.name] = convertFieldValue(field, value, keyPath);
  }
  return out;
}

/** Field by JSON key: lowerCamelCase (protobufjs's own names) or the .proto's snake_case. */
function findField(type: protobuf.Type, key: string): protobuf.Field | undefined {
  const direct = ownField(type, key);
  if (direct || !key.includes('_')) return direct;
  // protobufjs named the fields with util.camelCase from the .proto's snake_case names, so the
  // same function maps a snake_case key onto them.
  return ownField(type, protobuf.util.camelCase(key));
}

/** `fields` is a plain object: a key like "constructor" must not find its prototype. */
function ownField(type: protobuf.Type, name: string): protobuf.Field | undefined {
  return Object.prototype.hasOwnProperty.call(type.fields, name) ? type.fields[name] : undefined;
}

function fieldOf(type: protobuf.Type, name: string): protobuf.Field {
  const field = ownField(type, name);
  if (!field) throw new Error(`internal: ${fullNameOf(type)} has no field ${name}`);
  return field;
}

function isValueType(field: protobuf.Field): boolean {
  field.resolve();
  const resolved = field.resolvedType;
  const name = resolved ? fullNameOf(resolved) : '';
  return name === 'google.protobuf.Value' || name === 'google.protobuf.NullValue';
}

function convertFieldValue(field: protobuf.Field, value: unknown, path: string): unknown {
  if (field.map) {
    if (!isObject(value)) fail(path, 'a JSON object (a map)', value);
    const out: PbObject = {};
    const keyType = field instanceof protobuf.MapField ? field.keyType : 'string';
    for (const [key, item] of Object.entries(value)) {
      const itemPath = `${path}[${JSON.stringify(key)}]`;
      checkMapKey(keyType, key, itemPath);
      out[key] = convertField(field, item, itemPath);
    }
    return out;
  }
  if (field.repeated) {
    if (!Array.isArray(value)) fail(path, 'a JSON array', value);
    return value.map((item, i) => convertField(field, item, `${path}[${i}]`));
  }
  return convertField(field, value, path);
}

/** One value of a field (one element, for repeated and map fields). */
function convertField(field: protobuf.Field, value: unknown, path: string): unknown {
  field.resolve();
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return convertMessage(resolved, value, path);
  if (resolved instanceof protobuf.Enum) return convertEnum(resolved, value, path);
  return convertScalar(field.type, value, path);
}

function checkMapKey(keyType: string, key: string, path: string): void {
  if (keyType === 'string') return;
  if (keyType === 'bool' ? key === 'true' || key === 'false' : /^-?\d+$/.test(key)) return;
  throw new Error(`${path}: map key must be a ${keyType}`);
}

function convertEnum(type: protobuf.Enum, value: unknown, path: string): number {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (value === null && fullNameOf(type) === 'google.protobuf.NullValue') return 0;
  if (typeof value === 'string') {
    // `values` is a plain object too: "constructor" must not be an enum value.
    const number = Object.prototype.hasOwnProperty.call(type.values, value)
      ? type.values[value]
      : undefined;
    if (number !== undefined) return number;
    throw new Error(
      `${at(path)}unknown value ${JSON.stringify(value)} for enum ${fullNameOf(type)} ` +
        `(one of ${Object.keys(type.values).join(', ')})`,
    );
  }
  return fail(path, `an enum name or number for ${fullNameOf(type)}`, value);
}

// ---- scalars ----

const INT32_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  int32: [-0x80000000, 0x7fffffff],
  sint32: [-0x80000000, 0x7fffffff],
  sfixed32: [-0x80000000, 0x7fffffff],
  uint32: [0, 0xffffffff],
  fixed32: [0, 0xffffffff],
};
const INT64_KINDS = new Set(['int64', 'sint64', 'sfixed64', 'uint64', 'fixed64']);

function convertScalar(kind: string, value: unknown, path: string): unknown {
  switch (kind) {
    case 'string':
      return typeof value === 'string' ? value : fail(path, 'a string', value);
    case 'bool':
      return typeof value === 'boolean' ? value : fail(path, 'true or false', value);
    case 'double':
    case 'float':
      return convertFloat(value, path);
    case 'bytes':
      return convertBytes(value, path);
  }
  const range = INT32_RANGES[kind];
  if (range) {
    const number = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
    if (typeof number === 'number' && Number.isInteger(number)) {
      if (number >= range[0] && number <= range[1]) return number;
      throw new Error(`${at(path)}${number} is out of range for ${kind}`);
    }
    return fail(path, `an integer (${kind})`, value);
  }
  if (INT64_KINDS.has(kind)) return convertInt64(kind, value, path);
  throw new Error(`${at(path)}unsupported field type ${kind}`);
}

/** 64-bit integers as numbers (exact ones only) or decimal strings; protobufjs makes a Long. */
function convertInt64(kind: string, value: unknown, path: string): string {
  let text: string | undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value)) text = String(value);
  else if (typeof value === 'string' && /^-?\d+$/.test(value)) text = value;
  if (text === undefined) return fail(path, `an integer or a decimal string (${kind})`, value);
  if (kind.startsWith('u') || kind === 'fixed64') {
    if (text.startsWith('-')) throw new Error(`${at(path)}${text} is out of range for ${kind}`);
  }
  return text;
}

function convertFloat(value: unknown, path: string): number {
  if (typeof value === 'number') return value;
  if (value === 'NaN') return NaN;
  if (value === 'Infinity') return Infinity;
  if (value === '-Infinity') return -Infinity;
  if (typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value))) {
    return Number(value);
  }
  return fail(path, 'a number', value);
}

function convertBytes(value: unknown, path: string): Uint8Array {
  if (value instanceof Uint8Array) return value;
  // Standard or URL-safe base64, padding optional, as proto3 JSON allows.
  if (typeof value === 'string' && /^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) {
    return Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  }
  return fail(path, 'base64 bytes', value);
}

// ---- well-known types ----

function convertAny(json: unknown, path: string): PbObject {
  if (!isObject(json)) fail(path, 'a JSON object for google.protobuf.Any', json);
  const typeUrl = json['@type'];
  if (typeUrl === undefined) {
    // The wire form, { type_url, value: base64 }, for hand-made payloads.
    if ('type_url' in json || 'typeUrl' in json) return convertWireAny(json, path);
    throw new Error(`${at(path)}google.protobuf.Any needs "@type"`);
  }
  if (typeof typeUrl !== 'string') fail(join(path, '@type'), 'a type URL string', typeUrl);
  const type = requireType(typeUrl, join(path, '@type'));
  const { '@type': _ignored, ...fields } = json;
  const payload = SPECIAL_JSON.has(fullNameOf(type)) ? specialPayload(fields, path) : fields;
  const payloadPath = SPECIAL_JSON.has(fullNameOf(type)) ? join(path, 'value') : path;
  return { type_url: typeUrl, value: encode(type, convertMessage(type, payload, payloadPath)) };
}

function convertWireAny(json: JsonObject, path: string): PbObject {
  const out: PbObject = {};
  for (const [key, value] of Object.entries(json)) {
    const keyPath = join(path, key);
    if (key === 'type_url' || key === 'typeUrl') {
      out['type_url'] = convertScalar('string', value, keyPath);
    } else if (key === 'value') {
      out['value'] = convertBytes(value, keyPath);
    } else {
      throw new Error(`${keyPath}: no such field in google.protobuf.Any`);
    }
  }
  return out;
}

/** `{ "@type": ".../google.protobuf.Duration", "value": "1s" }`: the JSON sits under "value". */
function specialPayload(fields: JsonObject, path: string): unknown {
  for (const key of Object.keys(fields)) {
    if (key !== 'value') throw new Error(`${join(path, key)}: no such field in this Any`);
  }
  return fields['value'];
}

function convertStruct(json: unknown, path: string): PbObject {
  if (!isObject(json)) fail(path, 'a JSON object for google.protobuf.Struct', json);
  const fields: PbObject = {};
  for (const [key, value] of Object.entries(json))
    fields[key] = convertValue(value, join(path, key));
  return { fields };
}

function convertValue(json: unknown, path: string): PbObject {
  if (json === null) return { nullValue: 0 };
  if (typeof json === 'number') return { numberValue: json };
  if (typeof json === 'string') return { stringValue: json };
  if (typeof json === 'boolean') return { boolValue: json };
  if (Array.isArray(json)) {
    return { listValue: { values: json.map((item, i) => convertValue(item, `${path}[${i}]`)) } };
  }
  if (isObject(json)) return { structValue: convertStruct(json, path) };
  return fail(path, 'a JSON value', json);
}

/** "1.5s", "-0.25s", "3s": seconds with up to 9 fractional digits, as proto3 JSON writes them. */
function parseDuration(text: string, path: string): PbObject {
  const match = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(text);
  if (!match) fail(path, 'a duration like "1.5s"', text);
  const sign = match[1] ? -1 : 1;
  const nanos = Number((match[3] ?? '').padEnd(9, '0'));
  return { seconds: `${match[1] ?? ''}${match[2]}`, nanos: nanos === 0 ? 0 : sign * nanos };
}

/** RFC 3339, "2024-01-02T03:04:05.5Z" or with an offset. */
function parseTimestamp(text: string, path: string): PbObject {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i.exec(
    text,
  );
  const millis = match ? Date.parse(`${match[1]}${match[3]}`) : NaN;
  if (!match || Number.isNaN(millis)) fail(path, 'an RFC 3339 timestamp', text);
  const nanos = Number((match[2] ?? '').padEnd(9, '0'));
  return { seconds: String(Math.floor(millis / 1000)), nanos };
}
