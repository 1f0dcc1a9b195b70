// A client process forked by the bench and driven over IPC: commands go out, events come back
// and wait, queued per kind with the time they arrived, until the bench asks for them. Both
// bench client kinds (bench/child.ts, bench/rpc-child.ts) are driven through this.
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';

/** An event and when it reached the bench (performance.now()). */
export interface Arrival<E> {
  readonly event: E;
  readonly at: number;
}

interface Waiter {
  resolve(arrival: Arrival<never>): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

type ErrorEvent = { readonly ev: 'error'; readonly message: string };

export class ForkedClient<C extends { cmd: string }, E extends { ev: string }> {
  private readonly arrived = new Map<string, Arrival<E>[]>();
  private readonly waiters = new Map<string, Waiter[]>();
  private failure: Error | undefined;
  private readonly exited: Promise<void>;

  /**
   * `label` names the process in errors; an event not answered in `timeoutMs` means the process
   * has hung, and every wait fails.
   */
  protected constructor(
    private readonly child: ChildProcess,
    private readonly label: string,
    private readonly timeoutMs: number,
  ) {
    child.on('message', (event: E) => this.onEvent({ event, at: performance.now() }));
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.once('exit', (code) => this.fail(new Error(`${label} exited (code ${code})`)));
  }

  send(command: C | { cmd: 'exit' }): void {
    this.child.send(command);
  }

  /** The next event of a kind, already arrived or to come. */
  protected nextArrival<K extends E['ev']>(ev: K): Promise<Arrival<Extract<E, { ev: K }>>> {
    type Result = Arrival<Extract<E, { ev: K }>>;
    const queued = this.arrived.get(ev)?.shift();
    if (queued) return Promise.resolve(queued as Result);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<Result>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: resolve as (arrival: Arrival<never>) => void,
        reject,
        timer: setTimeout(
          () => this.fail(new Error(`no "${ev}" from the ${this.label} in ${this.timeoutMs} ms`)),
          this.timeoutMs,
        ),
      };
      const list = this.waiters.get(ev) ?? [];
      list.push(waiter);
      this.waiters.set(ev, list);
    });
  }

  /** Asks the process to exit, and waits until it has. */
  async close(): Promise<void> {
    if (this.child.exitCode === null && this.child.connected) this.send({ cmd: 'exit' });
    const kill = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await this.exited;
    clearTimeout(kill);
  }

  private onEvent(arrival: Arrival<E>): void {
    if (arrival.event.ev === 'error') {
      this.fail(new Error(`${this.label}: ${(arrival.event as unknown as ErrorEvent).message}`));
      return;
    }
    const waiter = this.waiters.get(arrival.event.ev)?.shift();
    if (waiter) {
      clearTimeout(waiter.timer);
      waiter.resolve(arrival as Arrival<never>);
      return;
    }
    const list = this.arrived.get(arrival.event.ev) ?? [];
    list.push(arrival);
    this.arrived.set(arrival.event.ev, list);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const list of this.waiters.values()) {
      for (const waiter of list.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.reject(this.failure);
      }
    }
  }
}
