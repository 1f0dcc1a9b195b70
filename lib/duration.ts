/**
 * Milliseconds as a google.protobuf.Duration (also grpc-js's Duration). Rounded to whole
 * nanoseconds first, so `nanos` stays below 1e9 whatever the fraction.
 */
export function durationOfMs(ms: number): { seconds: number; nanos: number } {
  const total = Math.round(ms * 1e6);
  return { seconds: Math.floor(total / 1e9), nanos: total % 1e9 };
}
