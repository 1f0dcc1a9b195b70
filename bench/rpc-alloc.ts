// What a burst of RPCs allocates, from V8's sampling heap profiler with the objects that the
// minor and major GCs already collected kept in (rpc-hot.ts --alloc): bytes per RPC in all and
// by the function that allocated them.
import type * as inspector from 'node:inspector';

interface SamplingNode {
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
  readonly selfSize: number;
  readonly children: readonly SamplingNode[];
}

export interface Allocation {
  /** Sampled bytes allocated per RPC. */
  readonly perRpc: number;
  /** Bytes per RPC by the function that allocated them. */
  readonly byFunction: ReadonlyMap<string, number>;
}

/** Samples what `run` allocates while it sends `rpcs` RPCs. */
export async function sampleAllocation(
  session: inspector.Session,
  rpcs: number,
  run: () => Promise<void>,
): Promise<Allocation> {
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await run();
  const { profile } = (await post('HeapProfiler.stopSampling')) as {
    profile: { head: SamplingNode };
  };
  await post('HeapProfiler.disable');
  const byFunction = new Map<string, number>();
  let total = 0;
  const visit = (node: SamplingNode): void => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^.*?\/(node_modules|dist)\//, '$1/');
    const key = `${functionName || '(anonymous)'} ${file}${file ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + node.selfSize);
    total += node.selfSize;
    node.children.forEach(visit);
  };
  visit(profile.head);
  for (const [key, bytes] of byFunction) byFunction.set(key, bytes / rpcs);
  return { perRpc: total / rpcs, byFunction };
}

/** The `count` functions that allocate most in `a`, or (given `b`) most more or less than in `b`. */
export function allocationTable(a: Allocation, b?: Allocation, count = 15): string[] {
  const keys = new Set([...a.byFunction.keys(), ...(b?.byFunction.keys() ?? [])]);
  const rows = [...keys].map((key) => {
    const bytes = a.byFunction.get(key) ?? 0;
    return { key, bytes, more: b ? bytes - (b.byFunction.get(key) ?? 0) : bytes };
  });
  rows.sort((x, y) => Math.abs(y.more) - Math.abs(x.more));
  return rows
    .slice(0, count)
    .map(({ key, bytes, more }) =>
      b
        ? `${more.toFixed(0).padStart(6)} B more (${bytes.toFixed(0)} B)  ${key}`
        : `${bytes.toFixed(0).padStart(6)} B  ${key}`,
    );
}
