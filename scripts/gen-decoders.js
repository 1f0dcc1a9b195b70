// Emits lib/generated/decoders.ts: one decode function per message of protos/, written out at
// build time (decision 0060), so that no decoder is generated at runtime. Each returns an object
// of the interface scripts/gen-protos.js writes into protos.ts, with the values protobufjs's
// decoder gives (the same defaults, 64-bit integers as numbers), every field an own property set
// in one object literal (one shape per message) and each oneof's discriminator a plain property.
// Fields not in protos/ are skipped by their wire type, and so is a known field that arrives with
// another wire type (as protobuf's own parsers do; protobufjs would misread it).
'use strict';

const protobuf = require('protobufjs');

/** Wire types: 0 varint, 1 fixed 64, 2 length-delimited, 5 fixed 32. */
const WIRE_TYPES = {
  double: 1,
  float: 5,
  int32: 0,
  uint32: 0,
  sint32: 0,
  fixed32: 5,
  sfixed32: 5,
  int64: 0,
  uint64: 0,
  sint64: 0,
  fixed64: 1,
  sfixed64: 1,
  bool: 0,
  string: 2,
  bytes: 2,
};

function tag(id, wireType) {
  return id * 8 + wireType;
}

/** The scalar type a field is read as: enums are int32 on the wire. */
function scalarOf(field) {
  if (field.resolvedType instanceof protobuf.Enum) return 'int32';
  return WIRE_TYPES[field.type] === undefined ? undefined : field.type;
}

function decoderName(type) {
  return `decode_${type.fullName.slice(1).replace(/\./g, '_')}`;
}

/** The value protobufjs leaves in an unset singular field, as a TypeScript expression. */
function defaultOf(field) {
  const value = field.defaultValue;
  if (value === null || value === undefined) return 'null';
  if (field.long) return String(value.toNumber());
  if (field.bytes) return 'EMPTY_BYTES';
  return JSON.stringify(value);
}

/**
 * The statements reading one occurrence of a field's value and handing it to `store` (a function
 * of the value's expression giving a statement), at nesting depth `depth`. A nested message is
 * read inline, within its bounds: no helper taking the decoder as an argument, which V8 could
 * not inline.
 */
function readStatements(field, store, depth, indent) {
  if (isRawField(field)) return [`${indent}${store('r.bytes()')}`];
  const scalar = scalarOf(field);
  if (scalar) return [`${indent}${store(`r.${readerOf(field, scalar)}()`)}`];
  return [
    `${indent}const outer = r.enter(${depth} + 1);`,
    `${indent}const value = ${decoderName(field.resolvedType)}(r, ${depth} + 1);`,
    `${indent}r.leave(outer);`,
    `${indent}${store('value')}`,
  ];
}

/**
 * Message fields read as their bytes (a view into the buffer decoded), for their reader to
 * decode when it needs them (decision 0081): a Cluster's `metadata`, which validation only
 * checks, and the ClusterUpdate reads into JSON when first asked for it. The encoders write such
 * a field's bytes as they are, or encode a message given instead.
 */
const RAW_FIELDS = new Set(['.envoy.config.cluster.v3.Cluster.metadata']);

function isRawField(field) {
  return RAW_FIELDS.has(field.fullName);
}

/**
 * Fields whose string is nearly always the previous one read: one string object for all of
 * them (WireReader.repeatedString, decision 0075).
 */
const REPEATED_STRINGS = new Set(['.google.protobuf.Any.type_url']);

function readerOf(field, scalar) {
  return REPEATED_STRINGS.has(field.fullName) ? 'repeatedString' : scalar;
}

function renderField(field, oneofOf) {
  const out = [];
  const ref = `m.${field.name}`;
  const scalar = scalarOf(field);
  if (field.map) {
    // Our protos have string keys only; another key type needs its own read and its own test.
    if (field.keyType !== 'string') {
      throw new Error(`map key type ${field.keyType} of ${field.fullName} is not supported`);
    }
    const keyWire = WIRE_TYPES.string;
    const valueDefault = scalar ? defaultOfScalar(scalar) : 'null';
    const valueWire = scalar ? WIRE_TYPES[scalar] : 2;
    out.push(`      case ${tag(field.id, 2)}: {`);
    out.push(`        const entry = r.enter(d + 1);`);
    out.push(`        let k = '';`);
    out.push(`        let v: unknown = ${valueDefault};`);
    out.push(`        while (r.pos < r.len) {`);
    out.push(`          const t2 = r.uint32();`);
    out.push(`          if (t2 === ${tag(1, keyWire)}) k = r.${field.keyType}();`);
    out.push(`          else if (t2 === ${tag(2, valueWire)}) {`);
    out.push(...readStatements(field, (v) => `v = ${v};`, 'd + 1', '            '));
    out.push(`          } else r.skip(t2 & 7, d + 1);`);
    out.push(`        }`);
    out.push(`        r.leave(entry);`);
    // A key `__proto__` must become an own property, not the map's prototype.
    out.push(`        if (k === '__proto__') setMapEntry(${ref}, k, v);`);
    out.push(`        else ${ref}[k] = v;`);
    out.push(`        break;`);
    out.push(`      }`);
    return out;
  }
  const wire = scalar ? WIRE_TYPES[scalar] : 2;
  const oneof = oneofOf.get(field);
  if (field.repeated) {
    if (scalar && wire !== 2) {
      // Packable: accept packed and unpacked encodings both, as every protobuf parser must.
      out.push(`      case ${tag(field.id, 2)}: {`);
      out.push(`        const end = r.delimitedEnd();`);
      out.push(`        while (r.pos < end) ${ref}.push(r.${scalar}());`);
      out.push(`        if (r.pos !== end) throw new RangeError('index out of range');`);
      out.push(`        break;`);
      out.push(`      }`);
    }
    out.push(`      case ${tag(field.id, wire)}: {`);
    out.push(...readStatements(field, (v) => `${ref}.push(${v});`, 'd', '        '));
    out.push(`        break;`);
    out.push(`      }`);
    return out;
  }
  out.push(`      case ${tag(field.id, wire)}: {`);
  out.push(...readStatements(field, (v) => `${ref} = ${v};`, 'd', '        '));
  if (oneof) out.push(`        m.${oneof} = '${field.name}';`);
  out.push(`        break;`);
  out.push(`      }`);
  return out;
}

function defaultOfScalar(scalar) {
  if (scalar === 'string') return "''";
  if (scalar === 'bool') return 'false';
  if (scalar === 'bytes') return 'EMPTY_BYTES';
  return '0';
}

function renderMessage(type, names) {
  const oneofOf = new Map();
  const oneofs = [];
  for (const oneof of type.oneofsArray) {
    if (oneof.name.startsWith('_')) continue; // proto3 `optional`: no discriminator in protos.ts
    oneofs.push(oneof.name);
    for (const member of oneof.fieldsArray) oneofOf.set(member, oneof.name);
  }
  const fields = type.fieldsArray.map((f) => f.resolve());
  const out = [];
  out.push(`function ${decoderName(type)}(r: WireReader, d: number): P.${names.get(type)} {`);
  const initial = fields.map((f) => {
    if (f.map) return `${f.name}: {}`;
    if (f.repeated) return `${f.name}: []`;
    return `${f.name}: ${defaultOf(f)}`;
  });
  for (const name of oneofs) initial.push(`${name}: undefined`);
  out.push(`  const m: Draft = { ${initial.join(', ')} };`);
  out.push(`  while (r.pos < r.len) {`);
  out.push(`    const t = r.uint32();`);
  out.push(`    switch (t) {`);
  for (const field of fields) out.push(...renderField(field, oneofOf));
  out.push(`      default:`);
  out.push(`        r.skip(t & 7, d);`);
  out.push(`    }`);
  out.push(`  }`);
  out.push(`  return m as unknown as P.${names.get(type)};`);
  out.push(`}`);
  out.push('');
  return out;
}

/** The TypeScript of lib/generated/decoders.ts for every message of `types`. */
function renderDecoders(types, names) {
  const messages = types.filter((t) => t instanceof protobuf.Type);
  const out = [];
  out.push('// Generated by scripts/gen-protos.js from protos/. Do not edit: run `npm run gen`.');
  out.push('/* eslint-disable */');
  out.push("import type * as P from './protos';");
  out.push("import { setMapEntry, WireReader } from '../wire-reader';");
  out.push('');
  out.push('// The object under construction: its fields are assigned as the wire gives them.');
  out.push('type Draft = any;');
  out.push('');
  out.push('/** What an unset `bytes` field holds: one empty buffer, shared. */');
  out.push('const EMPTY_BYTES: Uint8Array = Buffer.alloc(0);');
  out.push('');
  for (const type of messages) out.push(...renderMessage(type, names));
  out.push("/** Every message's decoder, by its full protobuf name. */");
  out.push('export const decoders: {');
  out.push('  readonly [K in keyof P.Messages]: (r: WireReader, d: number) => P.Messages[K];');
  out.push('} = {');
  for (const type of messages) out.push(`  '${type.fullName.slice(1)}': ${decoderName(type)},`);
  out.push('};');
  out.push('');
  return out.join('\n');
}

module.exports = { renderDecoders, WIRE_TYPES, tag, scalarOf, isRawField };
