// Runs the xds-client command as a child process, the way a person or a script would.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '..', '..');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The environment of every run: no colour, no bootstrap from the developer's shell. */
function cliEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env['GRPC_XDS_BOOTSTRAP'];
  delete env['GRPC_XDS_BOOTSTRAP_CONFIG'];
  delete env['FORCE_COLOR'];
  return { ...env, ...extra };
}

/**
 * The command as `npm test` ships it: the built dist/lib/cli/bin.js (run-specs.js builds dist/
 * first when lib/ is newer). Running the TypeScript sources through tsx cost each run a
 * second or more of compiling, and a loaded machine several. `script`, another program (an
 * example, path from the root), still runs through tsx's CommonJS hook.
 */
const BIN = join(ROOT, 'dist', 'lib', 'cli', 'bin.js');

function spawnCli(args: readonly string[], env?: NodeJS.ProcessEnv, script?: string): ChildProcess {
  if (script === undefined && !existsSync(BIN)) {
    throw new Error(`${BIN} is missing: run \`npm run build\` (or scripts/run-specs.js) first`);
  }
  const argv = script === undefined ? [BIN] : ['--require', 'tsx/cjs', script];
  return spawn(process.execPath, [...argv, ...args], {
    cwd: ROOT,
    env: cliEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs to completion; kills the child and rejects after `timeoutMs`. */
export function runCli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<CliResult> {
  const started = Date.now();
  const child = spawnCli(args, options.env);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolvePromise, reject) => {
    const timeoutMs = options.timeoutMs ?? 20_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `xds-client ${args.join(' ')}: still running after ${timeoutMs} ms\n${stdout}\n${stderr}`,
        ),
      );
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** A long-running command (serve, watch without --once): read its output as it comes. */
export class RunningCli {
  stdout = '';
  stderr = '';
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private readonly listeners = new Set<() => void>();

  /** `script`: another program than the command, e.g. an example (path from the root). */
  constructor(args: readonly string[], env?: NodeJS.ProcessEnv, script?: string) {
    this.child = spawnCli(args, env, script);
    this.child.stdout!.on('data', (chunk: Buffer) => {
      this.stdout += chunk.toString();
      for (const listener of this.listeners) listener();
    });
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
      for (const listener of this.listeners) listener();
    });
    this.exited = new Promise((resolvePromise) => this.child.on('close', resolvePromise));
  }

  /** Resolves with the first match of `pattern` in stdout + stderr, now or later. */
  waitFor(pattern: RegExp, timeoutMs = 10_000): Promise<RegExpMatchArray> {
    return new Promise((resolvePromise, reject) => {
      const check = () => {
        const match = (this.stdout + this.stderr).match(pattern);
        if (!match) return;
        this.listeners.delete(check);
        clearTimeout(timer);
        resolvePromise(match);
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${this.stdout}\n${this.stderr}`));
      }, timeoutMs);
      this.listeners.add(check);
      check();
    });
  }

  /** Resolves with the exit code once the program ends by itself; SIGKILL after `timeoutMs`. */
  async exit(timeoutMs: number): Promise<number | null> {
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends a signal and resolves with the exit code; SIGKILL if it does not stop in time. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 5000): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

export function tempDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'xds-client-cli-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Every non-empty stdout line, parsed as JSON (fails the test on a line that is not). */
export function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** What a person sees on stderr must be one line and never a stack trace. */
export function oneErrorLine(stderr: string): string {
  const lines = stderr.split('\n').filter((line) => line.trim() !== '');
  if (lines.length !== 1 || /^\s+at /m.test(stderr)) {
    throw new Error(`expected one line on stderr, got:\n${stderr}`);
  }
  return lines[0]!;
}
