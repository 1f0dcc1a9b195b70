import { status } from '@grpc/grpc-js';

/** One validation problem: the field path in the proto's snake_case names, and what is wrong. */
export interface FieldError {
  readonly path: string;
  readonly message: string;
}

export interface XdsErrorOptions {
  typeUrl?: string;
  resourceName?: string;
  details?: readonly FieldError[];
  cause?: unknown;
  /**
   * The xDS node id this error concerns. The message then starts with `[xDS node id: …]: `, as
   * grpc-go writes it (C-core appends ` (node ID:…)` instead): an operator reading an RPC
   * failure can tell which client it was, and search for the same text as in grpc-go's logs.
   * Decision 0030.
   */
  nodeId?: string;
}

/**
 * Every error the library reports. `code` is a grpc-js `status`: NOT_FOUND (the resource does
 * not exist), INVALID_ARGUMENT (it failed validation, or a bad bootstrap), UNAVAILABLE (the
 * management server cannot be reached). Match on `code` or use `isXdsError`, not `instanceof`:
 * two copies of the library may be loaded in one process.
 */
export class XdsError extends Error {
  override readonly name = 'XdsError';
  readonly code: status;
  readonly typeUrl: string | undefined;
  readonly resourceName: string | undefined;
  readonly details: readonly FieldError[];
  readonly nodeId: string | undefined;
  /**
   * The message without the node id: what went wrong. Embed this, never `message`, in another
   * error's reason (`errorReason` does it for any thrown value): the node id is added once, by
   * the outermost XdsError.
   */
  readonly reason: string;

  constructor(code: status, reason: string, options: XdsErrorOptions = {}) {
    const message = options.nodeId === undefined ? reason : withNodeId(reason, options.nodeId);
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.reason = reason;
    this.nodeId = options.nodeId;
    this.typeUrl = options.typeUrl;
    this.resourceName = options.resourceName;
    this.details = options.details ?? [];
  }
}

/** `[xDS node id: id]: reason`: the one way a message names the node it concerns. */
function withNodeId(reason: string, nodeId: string): string {
  return `[xDS node id: ${nodeId}]: ${reason}`;
}

/**
 * What went wrong, to embed in another message: an XdsError's `reason` (without the node id,
 * which the outer error adds once), another Error's message, or the value as text.
 */
export function errorReason(error: unknown): string {
  if (isXdsError(error)) return error.reason;
  return error instanceof Error ? error.message : String(error);
}

/** True for an XdsError from any copy of this library. */
export function isXdsError(value: unknown): value is XdsError {
  return (
    value instanceof Error &&
    value.name === 'XdsError' &&
    typeof (value as { code?: unknown }).code === 'number'
  );
}

/** `load_assignment.endpoints[0]: must be non-empty; lb_policy: unsupported value RANDOM`. */
export function formatFieldErrors(errors: readonly FieldError[]): string {
  return errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join('; ');
}
