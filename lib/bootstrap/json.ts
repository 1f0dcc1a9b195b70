// The JSON field helpers every part of the bootstrap reads its fields with: type checks whose
// messages name what was found, own-property reads, and frozen deep copies. Errors go to the
// ValidationErrors at the current field path.
import type { ValidationErrors } from '../validation-errors';

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `array` and `null` rather than typeof's `object`, which would confuse the reader. */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

export function mustBe(what: string, value: unknown): string {
  return `must be ${what} (got ${typeName(value)})`;
}

/** Own properties only: an object input must not pick up fields from a polluted prototype. */
export function own(obj: Readonly<JsonObject>, name: string): unknown {
  return Object.hasOwn(obj, name) ? obj[name] : undefined;
}

export function asObject(errs: ValidationErrors, value: unknown): JsonObject | undefined {
  if (isObject(value)) return value;
  errs.add(mustBe('an object', value));
  return undefined;
}

/** An optional array: absent is empty; anything else but an array is an error (and empty). */
export function optionalArray(errs: ValidationErrors, value: unknown): readonly unknown[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value;
  errs.add(`must be an array (got ${typeName(value)})`);
  return [];
}

export function optionalString(
  errs: ValidationErrors,
  obj: JsonObject,
  name: string,
): string | undefined {
  const value = own(obj, name);
  if (value === undefined || typeof value === 'string') return value;
  errs.addAt(name, mustBe('a string', value));
  return undefined;
}

export function requiredString(
  errs: ValidationErrors,
  obj: JsonObject,
  name: string,
): string | undefined {
  if (own(obj, name) === undefined) {
    errs.addAt(name, 'field not present');
    return undefined;
  }
  return optionalString(errs, obj, name);
}

/**
 * A frozen deep copy, so that later changes to an object input cannot reach the shared
 * bootstrap. Values JSON cannot carry (functions, NaN, cycles: possible only in an object input)
 * are errors. Undefined if any was found.
 */
export function frozenJsonObject(
  errs: ValidationErrors,
  obj: JsonObject,
): Readonly<JsonObject> | undefined {
  const before = errs.count;
  const copy = frozenJson(errs, obj, new Set());
  return errs.count === before ? (copy as Readonly<JsonObject>) : undefined;
}

function frozenJson(errs: ValidationErrors, value: unknown, ancestors: Set<object>): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) errs.add(`must be a finite number (got ${value})`);
    return value;
  }
  if (typeof value !== 'object') {
    errs.add(mustBe('a JSON value', value));
    return undefined;
  }
  if (ancestors.has(value)) {
    errs.add('must not contain a cycle');
    return undefined;
  }
  ancestors.add(value);
  const copy = Array.isArray(value)
    ? value.map((item: unknown, i) => errs.index(i, () => frozenJson(errs, item, ancestors)))
    : frozenJsonEntries(errs, value as JsonObject, ancestors);
  ancestors.delete(value);
  return Object.freeze(copy);
}

function frozenJsonEntries(
  errs: ValidationErrors,
  obj: JsonObject,
  ancestors: Set<object>,
): JsonObject {
  // fromEntries defines own properties, so a "__proto__" key stays data, not a prototype.
  return Object.fromEntries(
    Object.entries(obj)
      // An undefined property is an absent one, as JSON.stringify treats it.
      .filter(([, item]) => item !== undefined)
      .map(([key, item]) => [key, errs.field(key, () => frozenJson(errs, item, ancestors))]),
  );
}

/** Proto3 JSON Duration text (`"1.5s"`, at most 12 digits of seconds) → ms; undefined if not one. */
export function durationTextMs(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{1,12})(?:\.(\d{1,9}))?s$/.exec(value);
  if (!match) return undefined;
  return Number(match[1]) * 1000 + Number(`0.${match[2] ?? '0'}`) * 1000;
}

/** A Map that cannot change after construction: `ReadonlyMap` alone only stops TypeScript. */
export class FrozenMap<K, V> extends Map<K, V> {
  constructor(entries: Iterable<readonly [K, V]>) {
    super();
    for (const [key, value] of entries) super.set(key, value);
    Object.freeze(this);
  }

  override set(_key: K, _value: V): this {
    throw new TypeError('the xDS bootstrap is frozen');
  }

  override delete(_key: K): boolean {
    throw new TypeError('the xDS bootstrap is frozen');
  }

  override clear(): void {
    throw new TypeError('the xDS bootstrap is frozen');
  }
}
