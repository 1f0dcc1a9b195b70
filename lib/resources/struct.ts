// google.protobuf.Struct as the JSON it stands for: the config of a TypedStruct (a custom LB
// policy, a custom audit logger) and a Cluster's `filter_metadata`.
import type { Struct, Value } from '../generated/protos';
import { setMapEntry } from '../wire-reader';

export const EMPTY_CONFIG: Readonly<Record<string, unknown>> = Object.freeze({});

/** A google.protobuf.Struct as the JSON object it stands for, deeply frozen. */
export function structToJson(struct: Struct): Readonly<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const fields = struct.fields;
  // for-in, not Object.entries: no [key, value] array per field. The decoder's maps are plain
  // objects of own properties (a `__proto__` key is an own property, see setMapEntry).
  for (const key in fields) setMapEntry(out, key, valueToJson(fields[key]!));
  return Object.freeze(out);
}

function valueToJson(value: Value): unknown {
  // A map entry sent without its value decodes to null: the Value with no kind, JSON null.
  switch ((value as Value | null)?.kind) {
    case 'numberValue':
      return value.numberValue;
    case 'stringValue':
      return value.stringValue;
    case 'boolValue':
      return value.boolValue;
    case 'structValue':
      return structToJson(value.structValue!);
    case 'listValue':
      return Object.freeze(value.listValue!.values.map(valueToJson));
    default:
      // null_value, or no kind set (proto3 JSON null).
      return null;
  }
}
