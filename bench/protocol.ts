// The messages between the bench (the parent, which runs the one management server) and a
// client process (bench/child.ts). Every sample runs its client in a fresh process, so no client
// carries state, caches or JIT warmth from another sample, and the peer, which has no close(),
// is torn down by the process ending.

/** Who receives the responses: our client, @grpc/grpc-js-xds's, or plain protobufjs decoding. */
export type Impl = 'ours' | 'peer' | 'floor';

export type ResourceKind = 'cluster' | 'endpoint';

export interface SetupCommand {
  readonly cmd: 'setup';
  readonly impl: Impl;
  /** 127.0.0.1:port of the management server. */
  readonly server: string;
  /** Unique per process: the bench finds the client's stream by it. */
  readonly nodeId: string;
  readonly resource: ResourceKind;
  readonly names: readonly string[];
  /** Watchers per name (the floor has none: it only decodes). */
  readonly watchersPerName: number;
  /** The floor keeps its decoded messages (for the heap figures) instead of dropping them. */
  readonly retain: boolean;
  /**
   * Take the heap baseline (forced GCs) before making the client. Only for heap figures: a
   * forced GC shrinks V8's young generation, and the next allocation-heavy response then runs
   * up to twice as slowly as in a process that has been running.
   */
  readonly measureMemory: boolean;
  /** Ours only: gRFC A78's metrics to an OpenTelemetry SDK MeterProvider (never collected). */
  readonly metered?: boolean;
  /**
   * The floor only: `transport` reads nothing of a response but its version and nonce (a scan of
   * its top-level fields, the resources skipped by length) and ACKs it: the bare grpc-js time for
   * the bytes. Default `decode`: every resource decoded with protobufjs.
   */
  readonly floor?: 'decode' | 'transport';
}

/** The next response should bring this many watcher deliveries (0: none are expected). */
export interface ExpectCommand {
  readonly cmd: 'expect';
  readonly deliveries: number;
}

/** Adds this many watchers to every name; they are served from the cache. */
export interface MoreCommand {
  readonly cmd: 'more';
  readonly watchersPerName: number;
}

/** Heap after GC, and whether every watcher of a resource holds the very same object. */
export interface ReportCommand {
  readonly cmd: 'report';
}

/** Resolve an aggregate cluster tree to priorities (ours only). */
export interface TreeCommand {
  readonly cmd: 'tree';
  readonly server: string;
  readonly nodeId: string;
  readonly root: string;
  readonly expectedPriorities: number;
}

/** Stops the client through its own API (after a warm-up), keeping the process. */
export interface TeardownCommand {
  readonly cmd: 'teardown';
}

/** Ends the process at once: the peer's 10,000 cancels would take longer than the sample. */
export interface ExitCommand {
  readonly cmd: 'exit';
}

export type Command =
  | SetupCommand
  | ExpectCommand
  | MoreCommand
  | ReportCommand
  | TreeCommand
  | TeardownCommand
  | ExitCommand;

export type Event =
  /** Setup done (every watch started), or an `expect` taken into account. */
  | { readonly ev: 'ready' }
  /**
   * The expected deliveries have all happened. `processingMs`: from the response's bytes
   * reaching the client to the last delivery, on the client's clock.
   */
  | { readonly ev: 'delivered'; readonly processingMs: number }
  /** The client wrote its ACK; `processingMs` from the response's bytes to that write. */
  | { readonly ev: 'acked'; readonly processingMs: number }
  | {
      readonly ev: 'report';
      /** heapUsed after GC, minus the same before the client was made. */
      readonly heapBytes: number;
      /** The same for ArrayBuffer memory (outside the heap: kept resource bytes). */
      readonly arrayBufferBytes: number;
      readonly watchers: number;
      /** Resources whose watchers do not all hold one identical object (or hold none). */
      readonly nonIdentical: number;
      /** Resources checked. */
      readonly resources: number;
      /** Whether every object the watchers hold is frozen. */
      readonly frozen: boolean;
    }
  | { readonly ev: 'tree'; readonly ms: number; readonly priorities: number }
  | { readonly ev: 'error'; readonly message: string };
