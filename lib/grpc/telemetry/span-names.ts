// What A72's client and server spans share: their names' method part and how they end. Loads
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
