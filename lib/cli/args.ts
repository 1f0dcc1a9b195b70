// A small argv parser: `--flag value`, `--flag=value`, boolean flags, repeatable flags (kept in
// the order given), `--` to end flags. Anything unknown is a UsageError that names the fix.
import { UsageError } from './errors';

export type FlagKind = 'boolean' | 'string' | 'list';

export interface FlagSpec {
  readonly kind: FlagKind;
  /** Shown in a usage error, e.g. 'MS' for `--timeout MS`. */
  readonly value?: string;
  /** A one-letter alias, without the dash. */
  readonly short?: string;
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

export interface ParsedArgs {
  readonly positionals: readonly string[];
  /** Every value-taking flag in the order given: what repeatable target flags need. */
  readonly ordered: readonly { readonly flag: string; readonly value: string }[];
  has(flag: string): boolean;
  bool(flag: string): boolean;
  string(flag: string): string | undefined;
  list(flag: string): readonly string[];
  /** A non-negative integer flag, or `fallback` when absent. */
  int(flag: string, fallback: number, min?: number): number;
}

/** Parses `argv` (the arguments after the command name) for `command`, given its flags. */
export function parseArgs(command: string, argv: readonly string[], specs: FlagSpecs): ParsedArgs {
  const values = new Map<string, string[]>();
  const bools = new Set<string>();
  const positionals: string[] = [];
  const ordered: { flag: string; value: string }[] = [];
  const byShort = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) if (spec.short) byShort.set(spec.short, name);

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const raw = eq >= 0 ? arg.slice(0, eq) : arg;
    const name = raw.startsWith('--') ? raw.slice(2) : byShort.get(raw.slice(1));
    const spec = name === undefined ? undefined : specs[name];
    if (name === undefined || spec === undefined) throw unknownFlag(command, raw, specs);
    if (spec.kind === 'boolean') {
      if (eq >= 0) throw new UsageError(`${raw} takes no value (got "${arg.slice(eq + 1)}")`);
      bools.add(name);
      continue;
    }
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1]!.startsWith('--')) value = argv[++i];
    if (value === undefined || value === '') {
      throw new UsageError(`${raw} needs a value: ${raw} ${spec.value ?? 'VALUE'}`);
    }
    const list = values.get(name) ?? [];
    if (spec.kind === 'string' && list.length > 0) {
      throw new UsageError(`--${name} was given twice; pass it once`);
    }
    list.push(value);
    values.set(name, list);
    ordered.push({ flag: name, value });
  }

  return {
    positionals,
    ordered,
    has: (flag) => bools.has(flag) || values.has(flag),
    bool: (flag) => bools.has(flag),
    string: (flag) => values.get(flag)?.[0],
    list: (flag) => values.get(flag) ?? [],
    int(flag, fallback, min = 0) {
      const text = values.get(flag)?.[0];
      if (text === undefined) return fallback;
      const n = Number(text);
      if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min) {
        throw new UsageError(
          `--${flag} must be a whole number${min > 0 ? ` >= ${min}` : ''}, got "${text}"`,
        );
      }
      return n;
    },
  };
}

function unknownFlag(command: string, raw: string, specs: FlagSpecs): UsageError {
  const wanted = raw.replace(/^-+/, '');
  const guess = Object.keys(specs)
    .map((name) => ({ name, d: distance(wanted, name) }))
    .filter((c) => c.d <= Math.max(1, Math.floor(wanted.length / 3)))
    .sort((a, b) => a.d - b.d)[0];
  const hint = guess ? `did you mean --${guess.name}? ` : '';
  return new UsageError(
    `unknown flag ${raw} for "${command}": ${hint}see xds-client ${command} --help`,
  );
}

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        prev[j]! + 1,
        row[j - 1]! + 1,
        prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** Rejects positional arguments for commands that take none. */
export function noPositionals(command: string, args: ParsedArgs): void {
  const extra = args.positionals[0];
  if (extra !== undefined) {
    throw new UsageError(
      `unexpected argument "${extra}" for "${command}": see xds-client ${command} --help`,
    );
  }
}
