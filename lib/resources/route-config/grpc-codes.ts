// gRPC status codes from what a fault or an HTTP answer gives: A33's HTTP-to-gRPC mapping and
// the range check. Apart from the fault filter's validator (fault.ts) so that the grpc plugin's
// filters use them without loading that validator at import (decision 0095).

/** The highest gRPC status code (UNAUTHENTICATED). */
export const MAX_GRPC_CODE = 16;

// gRPC codes by number (this layer does not depend on grpc-js).
const INTERNAL = 13;
const UNAUTHENTICATED = 16;
const PERMISSION_DENIED = 7;
const UNIMPLEMENTED = 12;
const UNAVAILABLE = 14;
const UNKNOWN = 2;

/**
 * The gRPC code for an HTTP status, as A33 says (gRPC's HTTP-to-gRPC status mapping): 400
 * INTERNAL, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 UNIMPLEMENTED, 429, 502, 503 and
 * 504 UNAVAILABLE; anything else, 200 included, UNKNOWN.
 */
export function grpcCodeForHttpStatus(httpStatus: number): number {
  switch (httpStatus) {
    case 400:
      return INTERNAL;
    case 401:
      return UNAUTHENTICATED;
    case 403:
      return PERMISSION_DENIED;
    case 404:
      return UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return UNAVAILABLE;
    default:
      return UNKNOWN;
  }
}

/** A gRPC code from a number outside 0..16 is UNKNOWN (what a client makes of such a status). */
export function sanitizeGrpcCode(code: number): number {
  return code >= 0 && code <= MAX_GRPC_CODE ? code : UNKNOWN;
}
