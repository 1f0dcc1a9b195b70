// Memory once garbage collection has settled, for the heap figures of a client process (started
// with --expose-gc): three forced GCs, each followed by a turn of the event loop so that
// finalizers and weak callbacks run between them.

export interface SettledHeap {
  readonly heapUsed: number;
  readonly arrayBuffers: number;
}

export async function settledHeap(): Promise<SettledHeap> {
  const gc = globalThis.gc;
  if (!gc) throw new Error('the client process needs --expose-gc');
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return { heapUsed, arrayBuffers };
}
