// Decoding the payload of a google.protobuf.Any (or other embedded bytes) that a validator has
// already matched by type URL, recording a malformed payload as an error at the current path.
import { TYPE_URL_PREFIX, messageCodec } from '../codec';
import type { Any, Messages } from '../generated/protos';
import { type ValidationErrors } from '../validation-errors';
import { errorReason } from '../errors';

/** `type.googleapis.com/<fullName>`, the only URL form gRPC's xDS parsers match. */
export function typeUrlOf(fullName: keyof Messages): string {
  return TYPE_URL_PREFIX + fullName;
}

/**
 * Decodes `any.value` as `fullName`; on malformed bytes records `can't parse <Name>` at the
 * current path and returns undefined, so the caller can keep validating the rest of the resource.
 */
export function decodeAnyValue<K extends keyof Messages>(
  fullName: K,
  any: Any,
  errors: ValidationErrors,
): Messages[K] | undefined {
  return decodeOrRecord(fullName, any.value, errors, false);
}

/**
 * As decodeAnyValue for bare bytes, the error quoting the decoder's reason:
 * `can't parse <Name>: <reason>`. (The Cluster's extensions keep their shorter message.)
 */
export function decodeMessage<K extends keyof Messages>(
  fullName: K,
  bytes: Uint8Array,
  errors: ValidationErrors,
): Messages[K] | undefined {
  return decodeOrRecord(fullName, bytes, errors, true);
}

function decodeOrRecord<K extends keyof Messages>(
  fullName: K,
  bytes: Uint8Array,
  errors: ValidationErrors,
  withReason: boolean,
): Messages[K] | undefined {
  try {
    return messageCodec(fullName).decode(bytes);
  } catch (e) {
    const name = fullName.slice(fullName.lastIndexOf('.') + 1);
    errors.add(withReason ? `can't parse ${name}: ${errorReason(e)}` : `can't parse ${name}`);
    return undefined;
  }
}

/**
 * A `typed_config` that must hold a `fullName`: decoded and handed to `read`, which runs at the
 * `typed_config` path. Missing, of another type or malformed, it is recorded there and the
 * result is undefined.
 */
export function readTypedConfig<K extends keyof Messages, T>(
  typed: Any | null,
  fullName: K,
  errors: ValidationErrors,
  read: (message: Messages[K]) => T | undefined,
): T | undefined {
  if (typed === null) {
    errors.addAt('typed_config', 'field not present');
    return undefined;
  }
  return errors.field('typed_config', () => {
    if (typed.type_url !== typeUrlOf(fullName)) {
      errors.addAt('type_url', `unsupported value ${typed.type_url}`);
      return undefined;
    }
    const message = decodeAnyValue(fullName, typed, errors);
    return message === undefined ? undefined : read(message);
  });
}
