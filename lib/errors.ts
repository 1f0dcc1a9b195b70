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
   * The xDS node id this error concerns. The message then ends with `[xDS node id: …]`, as
   * grpc-go and C-core write it (gRFC A54): an operator reading an RPC failure can tell which
   * client it was.
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
  /** The message without the node id suffix: what went wrong, for a one-line display. */
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

/** `reason [xDS node id: id]`: the one way a message names the node it concerns. */
function withNodeId(reason: string, nodeId: string): string {
  return `${reason} [xDS node id: ${nodeId}]`;
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
