// An xDS server entry's `call_creds` (gRFC A97): a list like channel_creds, but every entry of
// a supported type is used (not the first one), unsupported types are skipped, and the field is
// optional. A supported entry's config must be valid, or the bootstrap is. The one type
// supported is `jwt_token_file`, whose config names the file holding the token.
import { resolve as resolvePath } from 'node:path';
import type { ValidationErrors } from '../validation-errors';
import type { CallCredsConfig } from './config';
import { asObject, isObject, mustBe, optionalArray, own, requiredString } from './json';

const JWT_TOKEN_FILE = 'jwt_token_file';

/** The supported entries of `call_creds` (the current path); invalid ones are left out. */
export function parseCallCredsList(
  errs: ValidationErrors,
  value: unknown,
): readonly CallCredsConfig[] {
  const supported: CallCredsConfig[] = [];
  optionalArray(errs, value).forEach((entry: unknown, i) => {
    const creds = errs.index(i, () => parseCallCreds(errs, entry));
    if (creds) supported.push(creds);
  });
  return Object.freeze(supported);
}

function parseCallCreds(errs: ValidationErrors, value: unknown): CallCredsConfig | undefined {
  const obj = asObject(errs, value);
  if (obj === undefined) return undefined;
  const type = requiredString(errs, obj, 'type');
  const config = own(obj, 'config');
  if (config !== undefined && !isObject(config)) {
    errs.addAt('config', mustBe('an object', config));
    return undefined;
  }
  // Other types' configs are opaque to us: a newer client may understand them.
  if (type !== JWT_TOKEN_FILE) return undefined;
  const field = errs.where;
  const file = errs.field('config', () => {
    if (config === undefined) {
      errs.add(`field not present (${JWT_TOKEN_FILE} needs config.${JWT_TOKEN_FILE})`);
      return undefined;
    }
    const path = requiredString(errs, config, JWT_TOKEN_FILE);
    if (path === '') errs.addAt(JWT_TOKEN_FILE, 'must be a non-empty file path');
    return path || undefined;
  });
  if (file === undefined) return undefined;
  return Object.freeze({ type: JWT_TOKEN_FILE, jwtTokenFile: resolvePath(file), field });
}
