// Decoding the payload of a google.protobuf.Any that a validator has already matched by type URL.
import { TYPE_URL_PREFIX, messageCodec } from '../codec';
import type { Any, Messages } from '../generated/protos';
import type { ValidationErrors } from '../validation-errors';

/** `type.googleapis.com/<fullName>`, the only URL form gRPC's xDS parsers match. */
export function typeUrlOf(fullName: keyof Messages): string {
  return TYPE_URL_PREFIX + fullName;
}

/**
 * Decodes `any.value` as `fullName`; on malformed bytes records an error at the current path and
 * returns undefined, so the caller can keep validating the rest of the resource.
 */
export function decodeAnyValue<K extends keyof Messages>(
  fullName: K,
  any: Any,
  errors: ValidationErrors,
): Messages[K] | undefined {
  try {
    return messageCodec(fullName).decode(any.value);
  } catch {
    errors.add(`can't parse ${fullName.slice(fullName.lastIndexOf('.') + 1)}`);
    return undefined;
  }
}
