// What a bench suite is: the workloads it measures (ids for --filter and --list), the sizes of
// a quick and a full run, and the context a suite runs in. The suites are in bench/suites/, one
// file each; bench/run.ts runs the selected ones and prints one table.
import { channelHeapConfig, type ChannelHeapConfig } from './suites/memory-channels';
import { rpcConfig, type RpcConfig } from './suites/rpc';
import type { BenchServer } from './harness';
import type { Results } from './stats';

export interface Config {
  /** Client processes per receiver for each workload (each gives one cold sample). */
  readonly sessions: number;
  /** Re-sends and single-cluster changes per CDS session. */
  readonly updatesPerSession: number;
  readonly smallClusters: number;
  readonly largeClusters: number;
  readonly assignments: number;
  readonly endpointsPerAssignment: number;
  readonly memoryClusters: number;
  readonly watchersPerCluster: number;
  readonly treeClusters: number;
  readonly importSamples: number;
  /** Responses the warm-up client gets before a timed sample (plus one unchanged re-send). */
  readonly warmupRounds: number;
  /** The EDS warm-up client's assignments (CDS warms up with as many clusters as it times). */
  readonly warmupAssignments: number;
  /** The one warm-up response before a service's second response: clusters / assignments. */
  readonly secondWarmupClusters: number;
  readonly secondWarmupAssignments: number;
  /** The scale workloads (only with --filter): cluster counts, assignment counts, samples. */
  readonly scaleClusters: readonly number[];
  readonly scaleAssignments: readonly number[];
  readonly scaleSessions: number;
  /** The RPC workloads' sizes (bench/suites/rpc.ts). */
  readonly rpc: RpcConfig;
  /** memory-channels' sizes (bench/suites/memory-channels.ts). */
  readonly channelHeap: ChannelHeapConfig;
}

export function config(quick: boolean): Config {
  return quick
    ? {
        sessions: 2,
        updatesPerSession: 2,
        smallClusters: 1_000,
        largeClusters: 2_000,
        assignments: 200,
        endpointsPerAssignment: 100,
        memoryClusters: 2_000,
        watchersPerCluster: 10,
        treeClusters: 200,
        importSamples: 3,
        warmupRounds: 3,
        warmupAssignments: 100,
        secondWarmupClusters: 100,
        secondWarmupAssignments: 10,
        scaleClusters: [1_000, 10_000, 30_000, 100_000],
        scaleAssignments: [1_000, 3_000, 10_000],
        scaleSessions: 1,
        rpc: rpcConfig(true),
        channelHeap: channelHeapConfig(true),
      }
    : {
        sessions: 5,
        updatesPerSession: 3,
        smallClusters: 1_000,
        largeClusters: 10_000,
        assignments: 1_000,
        endpointsPerAssignment: 100,
        memoryClusters: 10_000,
        watchersPerCluster: 10,
        treeClusters: 200,
        importSamples: 15,
        warmupRounds: 4,
        warmupAssignments: 300,
        secondWarmupClusters: 500,
        secondWarmupAssignments: 50,
        scaleClusters: [1_000, 10_000, 30_000, 100_000],
        scaleAssignments: [1_000, 3_000, 10_000],
        scaleSessions: 3,
        rpc: rpcConfig(false),
        channelHeap: channelHeapConfig(false),
      };
}

export interface Context {
  readonly config: Config;
  readonly bench: BenchServer;
  readonly results: Results;
  /** Lines printed under the table (identity checks, derived figures). */
  readonly notes: string[];
  progress(line: string): void;
  /**
   * --heap-snapshot DIR: where memory-channels' client processes write their heap snapshots
   * (bench/heap-diff.ts compares two).
   */
  readonly heapSnapshots?: string | undefined;
}

export interface Workload {
  readonly id: string;
  readonly description: string;
  /** Slow: measured only when a --filter selects it, never in the default or --quick run. */
  readonly optIn?: boolean;
}

export interface Suite {
  /** The workload ids it measures, for --filter and --list, with what each is. */
  readonly workloads: readonly Workload[];
  run(ctx: Context, wanted: (id: string) => boolean): Promise<void>;
}

export const n = (value: number): string => value.toLocaleString('en-US');
export const MB = (bytes: number): number => bytes / (1024 * 1024);
