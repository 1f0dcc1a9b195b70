// gRFC A32/A37 circuit breaking: one in-flight counter per {cluster, EDS service name}, shared by
// every policy instance and channel in the process, so a cluster used both directly and through
// an aggregate is held to one `max_requests` limit.

/** The in-flight calls to one {cluster, EDS service name}. */
export interface CallCounter {
  readonly inFlight: number;
  /** Counts a call in and returns true, unless `maxConcurrentRequests` are already in flight. */
  tryAcquire(maxConcurrentRequests: number): boolean;
  /** Counts a call out; never goes below zero (a double release is absorbed). */
  release(): void;
}

class Counter implements CallCounter {
  inFlight = 0;

  tryAcquire(maxConcurrentRequests: number): boolean {
    if (this.inFlight >= maxConcurrentRequests) return false;
    this.inFlight++;
    return true;
  }

  release(): void {
    if (this.inFlight > 0) this.inFlight--;
  }
}

// Module-level: the process shares it. Entries are never removed (as in grpc-js and C-core):
// a counter with calls in flight must outlive the policy that created it, and there is one
// small object per cluster ever used.
const counters = new Map<string, Counter>();

/** The process-wide counter of `cluster` with `edsServiceName` (undefined: none set). */
export function callCounter(cluster: string, edsServiceName: string | undefined): CallCounter {
  // JSON keeps ("a", undefined), ("a", "") and names containing separators apart.
  const key = JSON.stringify([cluster, edsServiceName ?? null]);
  let counter = counters.get(key);
  if (!counter) counters.set(key, (counter = new Counter()));
  return counter;
}
