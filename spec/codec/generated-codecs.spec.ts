// The decoders and encoders generated at build time (lib/generated/, decision 0060) must read
// and write every message of protos/ as protobufjs does: the validators were written against
// protobufjs's values, and servers read what clients write. Random messages of every type,
// encoded by protobufjs, are decoded both ways and compared field by field (64-bit integers as
// numbers, bytes as hex, each oneof's discriminator included); so are their truncations and
// the same bytes with unknown fields of every wire type added. The encoders must write the very
// bytes protobufjs writes for a protobufjs message, and a decoded message must encode back to
// what it was decoded from.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as protobuf from 'protobufjs';
import { lookupMessageType, messageCodec } from '../../lib/codec';
import type { Messages } from '../../lib/generated/protos';
import { descriptor } from '../../lib/generated/descriptor';
import { seeded } from '../helpers/random';

const SEED = Number(process.env['FUZZ_SEED'] ?? 20261126);
const PER_TYPE = Number(process.env['FUZZ_RUNS'] ?? 12);

type Rng = () => number;
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;

const STRINGS = [
  '',
  'a',
  'cluster-a',
  'outbound|80||svc.ns.svc.cluster.local',
  'é ü 😀',
  'x'.repeat(40),
];

function scalar(type: string, rng: Rng): unknown {
  switch (type) {
    case 'double':
      return pick(rng, [0, -1.5, 0.1, 1e300, -0]);
    case 'float':
      return pick(rng, [0, 1.5, -2.25, 3.4028234663852886e38]);
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return pick(rng, [0, 1, -1, 150, 2147483647, -2147483648]);
    case 'uint32':
    case 'fixed32':
      return pick(rng, [0, 1, 300, 4294967295]);
    case 'int64':
    case 'sint64':
    case 'sfixed64':
      return pick(rng, [0, 1, -1, 2 ** 40 + 3, -(2 ** 40) - 3, 2 ** 53 - 1]);
    case 'uint64':
    case 'fixed64':
      return pick(rng, [0, 1, 2 ** 32, 2 ** 53 - 1]);
    case 'bool':
      return rng() < 0.5;
    case 'string':
      return pick(rng, STRINGS);
    case 'bytes':
      return Uint8Array.from({ length: Math.floor(rng() * 5) }, () => Math.floor(rng() * 256));
    default:
      throw new Error(`no generator for ${type}`);
  }
}

function value(field: protobuf.Field, rng: Rng, depth: number): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) return pick(rng, Object.values(resolved.values));
  if (resolved instanceof protobuf.Type) return message(resolved, rng, depth + 1);
  return scalar(field.type, rng);
}

/** A random plain object of `type` for protobufjs's fromObject; depth bounds the nesting. */
function message(type: protobuf.Type, rng: Rng, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (depth > 4) return out;
  const chosen = new Set<protobuf.Field>();
  for (const oneof of type.oneofsArray) {
    if (rng() < 0.7) chosen.add(pick(rng, oneof.fieldsArray));
  }
  for (const field of type.fieldsArray) {
    field.resolve();
    if (field.partOf ? !chosen.has(field) : rng() < 0.35) continue;
    if (field.map) {
      const map: Record<string, unknown> = {};
      for (let i = Math.floor(rng() * 3); i > 0; i--)
        map[pick(rng, STRINGS)] = value(field, rng, depth);
      out[field.name] = map;
    } else if (field.repeated) {
      out[field.name] = Array.from({ length: Math.floor(rng() * 3) }, () =>
        value(field, rng, depth),
      );
    } else {
      out[field.name] = value(field, rng, depth);
    }
  }
  return out;
}

/** A decoded message as comparable plain data, read through the reflection type. */
function normalize(type: protobuf.Type, m: Record<string, unknown>): unknown {
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) out[field.name] = normalizeField(field, m[field.name]);
  for (const oneof of type.oneofsArray) {
    if (!oneof.name.startsWith('_')) out[`oneof ${oneof.name}`] = m[oneof.name] ?? undefined;
  }
  return out;
}

function normalizeField(field: protobuf.Field, v: unknown): unknown {
  if (field.map) {
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : 1,
    );
    return entries.map(([k, e]) => [k, normalizeOne(field, e)]);
  }
  if (field.repeated) return (v as unknown[]).map((e) => normalizeOne(field, e));
  return normalizeOne(field, v);
}

function normalizeOne(field: protobuf.Field, v: unknown): unknown {
  if (v === null || v === undefined) return v;
  if (field.resolvedType instanceof protobuf.Type) {
    const type = field.resolvedType;
    // A field the decoders leave as bytes (decision 0081): compared as the message it encodes.
    const message =
      v instanceof Uint8Array
        ? messageCodec(type.fullName.slice(1) as keyof Messages).decode(v)
        : (v as Record<string, unknown>);
    return normalize(type, message as Record<string, unknown>);
  }
  if (field.long) return typeof v === 'number' ? v : (v as { toNumber(): number }).toNumber();
  if (field.bytes) return Buffer.from(v as Uint8Array).toString('hex');
  return v;
}

type Outcome = { ok: true; value: unknown } | { ok: false };

function decodeBoth(type: protobuf.Type, bytes: Uint8Array): [Outcome, Outcome] {
  const fullName = type.fullName.slice(1) as keyof Messages;
  const run = (decode: () => unknown): Outcome => {
    try {
      return { ok: true, value: normalize(type, decode() as Record<string, unknown>) };
    } catch {
      return { ok: false };
    }
  };
  return [
    run(() => messageCodec(fullName).decode(bytes)),
    run(() => type.decode(bytes) as unknown),
  ];
}

/** Every message type of protos/, from the descriptor the codec's protobufjs Root is built of. */
function messageTypes(): protobuf.Type[] {
  const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
  const out: protobuf.Type[] = [];
  const walk = (ns: protobuf.NamespaceBase): void => {
    for (const nested of ns.nestedArray) {
      if (nested instanceof protobuf.Type) out.push(lookupMessageType(nested.fullName.slice(1))!);
      if (nested instanceof protobuf.Namespace || nested instanceof protobuf.Type) walk(nested);
    }
  };
  walk(root);
  return out;
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** A field number no message of protos/ uses, with a value of each wire type. */
const UNKNOWN_FIELDS = Uint8Array.from([
  ...[0xf8, 0xff, 0x7f, 0x96, 0x01], // field 262143, varint 150
  ...[0xf9, 0xff, 0x7f, 1, 2, 3, 4, 5, 6, 7, 8], // fixed64
  ...[0xfa, 0xff, 0x7f, 0x02, 0x61, 0x62], // length-delimited "ab"
  ...[0xfd, 0xff, 0x7f, 1, 2, 3, 4], // fixed32
  ...[0xfb, 0xff, 0x7f, 0x08, 0x01, 0xfc, 0xff, 0x7f], // a group holding a varint
]);

describe('generated codecs', () => {
  const types = messageTypes();

  it('cover every message of protos/', () => {
    assert.ok(types.length > 100);
    for (const type of types) {
      // A real round trip: the type's decoder and encoder both exist and agree on its default
      // (which protobufjs too encodes with its empty strings present).
      const codec = messageCodec(type.fullName.slice(1) as keyof Messages);
      const empty = codec.decode(new Uint8Array(0));
      assert.deepEqual(codec.decode(codec.encode(empty)), empty, type.fullName);
    }
  });

  it('read random messages of every type as protobufjs does', () => {
    const rng = seeded(SEED);
    for (const type of types) {
      for (let run = 0; run < PER_TYPE; run++) {
        const bytes = type.encode(type.fromObject(message(type, rng, 0))).finish();
        const [ours, theirs] = decodeBoth(type, bytes);
        assert.deepStrictEqual(ours, theirs, `${type.fullName}, seed ${SEED}, run ${run}`);
        assert.ok(ours.ok, `${type.fullName} failed to decode its own encoding`);
      }
    }
  });

  it('fail on every truncation protobufjs fails on, and read the others as it does', () => {
    // Stricter where protobufjs is lenient: its Buffer reader shortens a final string that runs
    // past the end, and reads a final varint cut short as if it had ended; these refuse both.
    const rng = seeded(SEED + 1);
    for (const type of types) {
      const bytes = type.encode(type.fromObject(message(type, rng, 0))).finish();
      for (let end = 0; end < bytes.length; end++) {
        const [ours, theirs] = decodeBoth(type, bytes.subarray(0, end));
        const where = `${type.fullName} cut at ${end} of ${Buffer.from(bytes).toString('hex')}`;
        if (ours.ok || !theirs.ok) assert.deepStrictEqual(ours, theirs, where);
      }
    }
  });

  it('skip fields they do not know, of every wire type', () => {
    const rng = seeded(SEED + 2);
    for (const type of types) {
      const bytes = type.encode(type.fromObject(message(type, rng, 0))).finish();
      const [plain] = decodeBoth(type, bytes);
      const [withUnknown, theirs] = decodeBoth(type, Buffer.concat([UNKNOWN_FIELDS, bytes]));
      assert.deepStrictEqual(withUnknown, plain, type.fullName);
      assert.deepStrictEqual(withUnknown, theirs, type.fullName);
    }
  });

  it('encode a protobufjs message of every type to the bytes protobufjs writes', () => {
    const rng = seeded(SEED + 3);
    for (const type of types) {
      for (let run = 0; run < PER_TYPE; run++) {
        const pbMessage = type.fromObject(message(type, rng, 0));
        const codec = messageCodec(type.fullName.slice(1) as keyof Messages);
        const ours = codec.encode(pbMessage as never);
        const theirs = type.encode(pbMessage).finish();
        assert.equal(hex(ours), hex(theirs), `${type.fullName}, seed ${SEED}, run ${run}`);
      }
    }
  });

  it('encode a decoded message of every type back to what it was decoded from', () => {
    const rng = seeded(SEED + 4);
    for (const type of types) {
      const codec = messageCodec(type.fullName.slice(1) as keyof Messages);
      for (let run = 0; run < PER_TYPE; run++) {
        const bytes = type.encode(type.fromObject(message(type, rng, 0))).finish();
        const again = codec.encode(codec.decode(bytes));
        assert.deepStrictEqual(decodeBoth(type, again), decodeBoth(type, bytes), type.fullName);
      }
    }
  });

  it("read each resource's type URL of a response as its own text when the previous one repeats", () => {
    // The reader reuses the previous type URL when the bytes repeat (decision 0075): a URL of
    // the same length with other bytes, an empty one and a longer one must still be their own.
    const response = lookupMessageType('envoy.service.discovery.v3.DiscoveryResponse')!;
    const urls = [
      'type.googleapis.com/envoy.config.cluster.v3.Cluster',
      'type.googleapis.com/envoy.config.cluster.v3.Cluster',
      'type.googleapis.com/envoy.config.cluster.v3.Clustes',
      'type.googleapis.com/envoy.config.cluster.v3.Cluster',
      '',
      '',
      'type.googleapis.com/envoy.config.listener.v3.Listener',
      'type.googleapis.com/envoy.config.cluster.v3.Cluster',
    ];
    const resources = urls.map((type_url, i) => ({ type_url, value: Buffer.from([i]) }));
    const bytes = response.encode(response.fromObject({ resources })).finish();
    const [ours, theirs] = decodeBoth(response, bytes);
    assert.deepStrictEqual(ours, theirs);
    const decoded = messageCodec('envoy.service.discovery.v3.DiscoveryResponse').decode(bytes);
    assert.deepEqual(
      decoded.resources.map((any) => any.type_url),
      urls,
    );
  });

  it('read a 64-bit integer beyond 2^53 as protobufjs Long.toNumber does', () => {
    // Duration.seconds (int64), 2^63 - 1 and -2^63 + 1: varints of 9 and 10 bytes.
    const duration = lookupMessageType('google.protobuf.Duration')!;
    for (const seconds of ['9223372036854775807', '-9223372036854775807', '-1']) {
      const bytes = duration.encode(duration.fromObject({ seconds })).finish();
      const [ours, theirs] = decodeBoth(duration, bytes);
      assert.deepStrictEqual(ours, theirs, seconds);
    }
  });
});
