// What A72's client and server spans share: their names' method part, their message events'
// attributes, and how they end. Loads
// nothing of @opentelemetry/api (its enums are written as their numbers).
import type { status as Status } from '@grpc/grpc-js';
import type { Span, SpanStatusCode } from '@opentelemetry/api';
import { methodLabel, statusLabel } from './labels';

const OK = 1 as SpanStatusCode;
const ERROR = 2 as SpanStatusCode;
/** The same object for every span that ends OK: a span copies the status it is given. */
const OK_STATUS = Object.freeze({ code: OK });

/** `pkg.Service.Method` from `/pkg.Service/Method`: `Sent.…`, `Attempt.…`, `Recv.…` follow. */
export function spanSuffix(path: string): string {
  return methodLabel(path).replace('/', '.');
}

/** A72's span status: OK, else ERROR with `<CODE>, <details>`; then the span ends. */
export function endSpan(span: Span, code: Status, details: string): void {
  if (code === 0) span.setStatus(OK_STATUS);
  else span.setStatus({ code: ERROR, message: `${statusLabel(code)}, ${details}` });
  span.end();
}

/**
 * A72's message event attributes: `sequence-number`, `message-size` (the bytes before
 * compression; undefined where they are not known, as on a client attempt's compressed
 * message) and, for a compressed message, `message-size-compressed`.
 */
export function messageEventAttributes(
  sequence: number,
  size: number | undefined,
  compressedSize: number | undefined,
): Record<string, number> {
  // One object literal per case: the span keeps it, and a literal's shape is made once.
  if (compressedSize === undefined) {
    return size === undefined
      ? { 'sequence-number': sequence }
      : { 'sequence-number': sequence, 'message-size': size };
  }
  return size === undefined
    ? { 'sequence-number': sequence, 'message-size-compressed': compressedSize }
    : {
        'sequence-number': sequence,
        'message-size': size,
        'message-size-compressed': compressedSize,
      };
}
