/** Reconnect backoff of gRPC's xDS clients: 1 s, ×1.6 per failure, ±20 % jitter, 120 s cap. */
export interface BackoffOptions {
  initialMs?: number;
  multiplier?: number;
  maxMs?: number;
  /** Relative jitter: 0.2 spreads each delay uniformly over ±20 %. */
  jitter?: number;
  /** Source of randomness in [0, 1); tests pass a constant. */
  random?: () => number;
}

export const DEFAULT_BACKOFF = {
  initialMs: 1000,
  multiplier: 1.6,
  maxMs: 120_000,
  jitter: 0.2,
} as const;

export class Backoff {
  private readonly initialMs: number;
  private readonly multiplier: number;
  private readonly maxMs: number;
  private readonly jitter: number;
  private readonly random: () => number;
  private nextBaseMs: number;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? DEFAULT_BACKOFF.initialMs;
    this.multiplier = options.multiplier ?? DEFAULT_BACKOFF.multiplier;
    this.maxMs = options.maxMs ?? DEFAULT_BACKOFF.maxMs;
    this.jitter = options.jitter ?? DEFAULT_BACKOFF.jitter;
    this.random = options.random ?? Math.random;
    this.nextBaseMs = this.initialMs;
  }

  /** The delay before the next attempt; each call grows the one after it. */
  next(): number {
    const base = this.nextBaseMs;
    this.nextBaseMs = Math.min(base * this.multiplier, this.maxMs);
    const spread = base * this.jitter * (this.random() * 2 - 1);
    return Math.max(0, Math.min(base + spread, this.maxMs));
  }

  /** Back to the initial delay: the last stream was healthy (it received a response). */
  reset(): void {
    this.nextBaseMs = this.initialMs;
  }
}
