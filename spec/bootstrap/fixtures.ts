// Bootstrap inputs and assertions shared by the bootstrap specs: a minimal valid bootstrap, ways
// to vary one part of it, and the exact-error check every rule uses.
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { loadBootstrap } from '../../lib/bootstrap';
import { isXdsError, type FieldError } from '../../lib/errors';

export const PREFIX = 'invalid xDS bootstrap: ';

export const SERVER = { server_uri: 'xds.example.com:443', channel_creds: [{ type: 'insecure' }] };
export const MINIMAL = { xds_servers: [SERVER] };

/** MINIMAL with the one server's fields replaced or added. */
export function withServer(fields: Record<string, unknown>): object {
  return { xds_servers: [{ ...SERVER, ...fields }] };
}

export function withNode(node: unknown): object {
  return { ...MINIMAL, node };
}

export function withAuthorities(authorities: unknown): object {
  return { ...MINIMAL, authorities };
}

/** Runs `load`, which must throw an INVALID_ARGUMENT XdsError, and returns that error. */
export function catchError(
  load: () => unknown,
): Error & { code: number; details: readonly FieldError[] } {
  try {
    load();
  } catch (err) {
    assert.ok(isXdsError(err), `expected an XdsError, got ${String(err)}`);
    assert.equal(err.code, status.INVALID_ARGUMENT);
    return err;
  }
  assert.fail('expected loadBootstrap to throw');
}

/** The exact message for one validation error of an object input. */
export function assertInvalid(input: object | string, message: string): void {
  const err = catchError(() => loadBootstrap(input));
  assert.equal(err.message, PREFIX + message);
}
