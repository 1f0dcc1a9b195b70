// Emits lib/generated/encoders.ts: one encode function per message of protos/, written out at
// build time (decision 0060), so that a client encodes its requests without loading protobufjs.
// Each writes what protobufjs's encoder writes for the same object: fields in number order; a
// singular field when it is an own property that is not null or undefined (so a protobufjs
// message's prototype defaults are left out); a oneof member only when it is the one the
// object's discriminator names, when it has one (a decoded message's property, set or
// undefined, or a protobufjs message's getter); repeated fields when not empty, packed as the schema says; every map entry.
'use strict';

const protobuf = require('protobufjs');
const { WIRE_TYPES, tag, scalarOf, isRawField } = require('./gen-decoders');

function encoderName(type) {
  return `encode_${type.fullName.slice(1).replace(/\./g, '_')}`;
}

/** Statements writing one value `v` of the field (its tag included) at depth `d`. */
function writeValue(field, v, tagNumber, indent) {
  const scalar = scalarOf(field);
  if (scalar) return [`${indent}w.uint32(${tagNumber});`, `${indent}w.${scalar}(${v});`];
  if (isRawField(field)) {
    // Decoded as its bytes (decision 0081): written back as they are; a message object encoded.
    return [
      `${indent}w.uint32(${tagNumber});`,
      `${indent}if (${v} instanceof Uint8Array) w.bytes(${v});`,
      `${indent}else {`,
      `${indent}  const start = w.fork();`,
      `${indent}  if (${v} != null) ${encoderName(field.resolvedType)}(${v}, w, d + 1);`,
      `${indent}  w.ldelim(start);`,
      `${indent}}`,
    ];
  }
  return [
    `${indent}w.uint32(${tagNumber});`,
    `${indent}{`,
    `${indent}  const start = w.fork();`,
    `${indent}  if (${v} != null) ${encoderName(field.resolvedType)}(${v}, w, d + 1);`,
    `${indent}  w.ldelim(start);`,
    `${indent}}`,
  ];
}

function renderField(field, oneofOf) {
  const out = [];
  const ref = `o.${field.name}`;
  const scalar = scalarOf(field);
  const wire = scalar ? WIRE_TYPES[scalar] : 2;
  out.push(`  v = ${ref};`);
  if (field.map) {
    // Our protos have string keys only (a bool key would need more than Number(k)).
    if (field.keyType !== 'string') {
      throw new Error(`map key type ${field.keyType} of ${field.fullName} is not supported`);
    }
    const keyWrite = 'w.string(k)';
    const valueWire = scalar ? WIRE_TYPES[scalar] : 2;
    out.push(`  if (v != null && hasOwn(o, '${field.name}')) {`);
    out.push(`    for (const k of Object.keys(v)) {`);
    out.push(`      w.uint32(${tag(field.id, 2)});`);
    out.push(`      const entry = w.fork();`);
    out.push(`      w.uint32(${tag(1, WIRE_TYPES[field.keyType])});`);
    out.push(`      ${keyWrite};`);
    out.push(...writeValue(field, 'v[k]', tag(2, valueWire), '      '));
    out.push(`      w.ldelim(entry);`);
    out.push(`    }`);
    out.push(`  }`);
    return out;
  }
  if (field.repeated) {
    out.push(`  if (v != null && v.length) {`);
    if (scalar && wire !== 2 && field.packed) {
      out.push(`    w.uint32(${tag(field.id, 2)});`);
      out.push(`    const start = w.fork();`);
      out.push(`    for (let i = 0; i < v.length; i++) w.${scalar}(v[i]);`);
      out.push(`    w.ldelim(start);`);
    } else {
      out.push(`    for (let i = 0; i < v.length; i++) {`);
      out.push(...writeValue(field, 'v[i]', tag(field.id, wire), '      '));
      out.push(`    }`);
    }
    out.push(`  }`);
    return out;
  }
  const oneof = oneofOf.get(field);
  const present = oneof
    ? `('${oneof}' in o ? o.${oneof} === '${field.name}' : hasOwn(o, '${field.name}'))`
    : `hasOwn(o, '${field.name}')`;
  out.push(`  if (v != null && ${present}) {`);
  out.push(...writeValue(field, 'v', tag(field.id, wire), '    '));
  out.push(`  }`);
  return out;
}

function renderMessage(type, names) {
  const oneofOf = new Map();
  for (const oneof of type.oneofsArray) {
    if (oneof.name.startsWith('_')) continue; // proto3 `optional`: presence is enough
    for (const member of oneof.fieldsArray) oneofOf.set(member, oneof.name);
  }
  const fields = type.fieldsArray.map((f) => f.resolve()).sort((a, b) => a.id - b.id);
  const out = [];
  if (fields.length === 0) {
    out.push(
      `function ${encoderName(type)}(_m: P.${names.get(type)} | Draft, _w: WireWriter, _d: number): void {`,
    );
    out.push('}');
    out.push('');
    return out;
  }
  out.push(
    `function ${encoderName(type)}(m: P.${names.get(type)} | Draft, w: WireWriter, d: number): void {`,
  );
  out.push(`  if (d > RECURSION_LIMIT) throw new Error('max depth exceeded');`);
  out.push(`  const o: Draft = m; // read field by field, whatever its class`);
  out.push(`  let v: Draft;`);
  for (const field of fields) out.push(...renderField(field, oneofOf));
  out.push('}');
  out.push('');
  return out;
}

/**
 * The messages a client sends (its ADS, LRS and CSDS messages) and every message they contain:
 * lib/generated/client-encoders.ts, so that a client loads these and not the encoders of every
 * resource, which only the testing server and tools use.
 */
const CLIENT_ROOTS = [
  'envoy.service.discovery.v3.DiscoveryRequest',
  'envoy.service.discovery.v3.DeltaDiscoveryRequest',
  'envoy.service.load_stats.v3.LoadStatsRequest',
  'envoy.service.status.v3.ClientStatusRequest',
  'envoy.service.status.v3.ClientStatusResponse',
];

/** `roots` and every message type reachable from them through their fields, in `types` order. */
function reachableFrom(types, roots) {
  const byName = new Map(types.map((t) => [t.fullName.slice(1), t]));
  const found = new Set();
  const visit = (type) => {
    if (!(type instanceof protobuf.Type) || found.has(type)) return;
    found.add(type);
    for (const field of type.fieldsArray) visit(field.resolve().resolvedType);
  };
  for (const name of roots) {
    const type = byName.get(name);
    if (!type) throw new Error(`client encoder root ${name} is not in protos/`);
    visit(type);
  }
  return types.filter((t) => found.has(t));
}

/**
 * The TypeScript of an encoders file: lib/generated/encoders.ts (every message, table
 * `encoders`, the client's taken from client-encoders.ts), or with `client`, client-encoders.ts
 * (the messages a client sends and what they contain, table `clientEncoders`).
 */
function renderEncoders(allTypes, names, { client = false } = {}) {
  const clientTypes = new Set(reachableFrom(allTypes, CLIENT_ROOTS));
  const types = client ? [...clientTypes] : allTypes;
  const table = client ? 'clientEncoders' : 'encoders';
  const messages = types.filter((t) => t instanceof protobuf.Type);
  const out = [];
  out.push('// Generated by scripts/gen-protos.js from protos/. Do not edit: run `npm run gen`.');
  out.push('/* eslint-disable */');
  out.push("import type * as P from './protos';");
  out.push("import { RECURSION_LIMIT } from '../wire-reader';");
  out.push("import type { WireWriter } from '../wire-writer';");
  // The full table takes the client's encoders from client-encoders.ts rather than repeat them.
  if (!client) out.push("import { clientEncoders } from './client-encoders';");
  out.push('');
  out.push('// A message to encode: a plain object or a protobufjs message, read field by field.');
  out.push('type Draft = any;');
  out.push('');
  out.push(
    'const hasOwn = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);',
  );
  out.push('');
  for (const type of messages) {
    if (client || !clientTypes.has(type)) out.push(...renderMessage(type, names));
    else out.push(`const ${encoderName(type)} = clientEncoders['${type.fullName.slice(1)}']!;`);
  }
  if (!client) out.push('');
  out.push(
    client
      ? '/** The encoder of each message a client sends or contains, by its full protobuf name. */'
      : "/** Every message's encoder, by its full protobuf name. */",
  );
  out.push(`export const ${table}: {`);
  out.push(
    `  readonly [K in keyof P.Messages]${client ? '?' : ''}: (m: P.Messages[K], w: WireWriter, d: number) => void;`,
  );
  out.push('} = {');
  for (const type of messages) out.push(`  '${type.fullName.slice(1)}': ${encoderName(type)},`);
  out.push('};');
  out.push('');
  return out.join('\n');
}

module.exports = { renderEncoders };
