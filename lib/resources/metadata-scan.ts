// An envoy.config.core.v3.Metadata read from its bytes without building it: whether decoding it
// would fail, how many entries it has, and whether one is a typed entry of a given type. A
// Cluster's metadata stays bytes until its ClusterUpdate is asked for it (decision 0081); this
// is what validation checks meanwhile.
//
// The walk makes the same reads, skips and nesting steps as the generated decoders of Metadata,
// Struct, Value, ListValue and Any (lib/generated/decoders.ts), so it throws on exactly the
// input they throw on; spec/resources/cluster-metadata.spec.ts checks that on random and broken
// messages.
import { typeNameOfUrl } from '../codec';
import { WireReader } from '../wire-reader';

export interface MetadataScan {
  /** Entries of `filter_metadata`. */
  readonly structs: number;
  /** A `typed_filter_metadata` entry's Any names the type asked about (see scanMetadata). */
  readonly hasTypedEntryOf: boolean;
}

/**
 * Scans a Cluster's `metadata` bytes; throws as decoding them within the Cluster would (they are
 * one level down: the nesting limit counts from there). `typeName`: the full message name to
 * look for among the typed entries (by `typeNameOfUrl` of their `type_url`).
 */
export function scanMetadata(bytes: Uint8Array, typeName: string): MetadataScan {
  const r = new WireReader(bytes);
  let structs = 0;
  let hasTypedEntryOf = false;
  const d = 1;
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 10 || t === 18) {
      // filter_metadata (map<string, Struct>) or typed_filter_metadata (map<string, Any>).
      const entry = r.enter(d + 1);
      while (r.pos < r.len) {
        const t2 = r.uint32();
        if (t2 === 10) skipString(r);
        else if (t2 === 18) {
          const outer = r.enter(d + 2);
          if (t === 10) walkStruct(r, d + 2);
          else if (walkAny(r, d + 2, typeName)) hasTypedEntryOf = true;
          r.leave(outer);
        } else r.skip(t2 & 7, d + 1);
      }
      r.leave(entry);
      if (t === 10) structs++;
    } else r.skip(t & 7, d);
  }
  return { structs, hasTypedEntryOf };
}

/** string()'s bounds check, without making the string. */
function skipString(r: WireReader): void {
  r.pos = r.delimitedEnd();
}

/** Each field 1 of a message (Struct's entries, ListValue's values) by `element`; others skipped. */
function walkEach(r: WireReader, d: number, element: (r: WireReader, d: number) => void): void {
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t !== 10) {
      r.skip(t & 7, d);
      continue;
    }
    const outer = r.enter(d + 1);
    element(r, d + 1);
    r.leave(outer);
  }
}

function walkStruct(r: WireReader, d: number): void {
  walkEach(r, d, walkStructEntry);
}

/** One `fields` entry of a Struct: its key and its Value. */
function walkStructEntry(r: WireReader, d: number): void {
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 10) skipString(r);
    else if (t === 18) {
      const outer = r.enter(d + 1);
      walkValue(r, d + 1);
      r.leave(outer);
    } else r.skip(t & 7, d);
  }
}

function walkValue(r: WireReader, d: number): void {
  while (r.pos < r.len) {
    const t = r.uint32();
    switch (t) {
      case 8: // null_value
      case 32: // bool_value
        r.uint32();
        break;
      case 17: // number_value
        r.double();
        break;
      case 26: // string_value
        skipString(r);
        break;
      case 42: // struct_value
      case 50: {
        // list_value
        const outer = r.enter(d + 1);
        if (t === 42) walkStruct(r, d + 1);
        else walkList(r, d + 1);
        r.leave(outer);
        break;
      }
      default:
        r.skip(t & 7, d);
    }
  }
}

function walkList(r: WireReader, d: number): void {
  walkEach(r, d, walkValue);
}

/** Walks an Any; true if its (last) type_url names `typeName`. */
function walkAny(r: WireReader, d: number, typeName: string): boolean {
  let named = false;
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 10) named = typeNameOfUrl(r.string()) === typeName;
    else if (t === 18) skipString(r);
    else r.skip(t & 7, d);
  }
  return named;
}
