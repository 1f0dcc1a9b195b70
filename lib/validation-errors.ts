import type { FieldError } from './errors';

/** At most this many messages are kept for one field path; the rest are counted. */
const MAX_ERRORS_PER_FIELD = 20;

/**
 * Collects every validation problem of one resource, each under the field path where it was
 * found, in the proto's snake_case names (`load_assignment.endpoints[0].lb_endpoints`).
 * Validators scope with `field()` / `index()` and keep going after an error, so one NACK
 * names everything that is wrong (the approach of gRPC C-core's ValidationErrors).
 */
export class ValidationErrors {
  private readonly path: string[] = [];
  private readonly errors: FieldError[] = [];
  private readonly perField = new Map<string, number>();

  /** Runs `fn` with `name` appended to the current path. */
  field<T>(name: string, fn: () => T): T {
    this.path.push(this.path.length === 0 ? name : `.${name}`);
    try {
      return fn();
    } finally {
      this.path.pop();
    }
  }

  /** Runs `fn` with `[i]` appended to the current path. */
  index<T>(i: number, fn: () => T): T {
    this.path.push(`[${i}]`);
    try {
      return fn();
    } finally {
      this.path.pop();
    }
  }

  /** Records a problem at the current path. */
  add(message: string): void {
    const path = this.path.join('');
    const count = this.perField.get(path) ?? 0;
    this.perField.set(path, count + 1);
    if (count < MAX_ERRORS_PER_FIELD) this.errors.push({ path, message });
    else if (count === MAX_ERRORS_PER_FIELD)
      this.errors.push({ path, message: 'more errors omitted' });
  }

  /** Records a problem at `name` below the current path. */
  addAt(name: string, message: string): void {
    this.field(name, () => this.add(message));
  }

  /** The current path (`xds_servers[0].call_creds[1]`), for a value that names its own place. */
  get where(): string {
    return this.path.join('');
  }

  get isEmpty(): boolean {
    return this.errors.length === 0;
  }

  /** The number of errors recorded so far: compare before and after to scope a check. */
  get count(): number {
    return this.errors.length;
  }

  list(): readonly FieldError[] {
    return this.errors.slice();
  }
}
