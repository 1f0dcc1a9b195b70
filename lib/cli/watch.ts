// `xds-client watch`: ask a management server what a gRPC client would see.
import { status } from '@grpc/grpc-js';
import { isXdsError, type XdsError } from '../errors';
import { XdsClient } from '../xds-client';
import { parseArgs, noPositionals, type FlagSpecs } from './args';
import { resolveBootstrap, SERVER_FLAGS, type ResolvedBootstrap } from './bootstrap-cmd';
import { colorSupported, palette, type Palette } from './colors';
import { CliError, EXIT, UsageError, oneLine, type ExitCode } from './errors';
import { WATCH_HELP } from './help';
import { logProtocol, shortType, TYPE_WORD } from './protocol-log';
import { toJsonText } from './render';
import { connectivityReason, KINDS, startTarget, type Target } from './targets';

const WATCH_FLAGS: FlagSpecs = {
  ...SERVER_FLAGS,
  bootstrap: { kind: 'string', value: 'FILE' },
  listener: { kind: 'list', value: 'NAME' },
  route: { kind: 'list', value: 'NAME' },
  cluster: { kind: 'list', value: 'NAME' },
  'cluster-tree': { kind: 'list', value: 'NAME' },
  endpoints: { kind: 'list', value: 'NAME' },
  json: { kind: 'boolean' },
  once: { kind: 'boolean' },
  timeout: { kind: 'string', value: 'MS' },
  'resource-timeout': { kind: 'string', value: 'MS' },
  verbose: { kind: 'boolean', short: 'v' },
  'no-color': { kind: 'boolean' },
  help: { kind: 'boolean', short: 'h' },
};

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

/** Resolves on SIGINT or SIGTERM (the way to stop a watch that is not --once). */
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export async function runWatch(argv: readonly string[], io: Io): Promise<number> {
  const args = parseArgs('watch', argv, WATCH_FLAGS);
  if (args.bool('help')) {
    io.out(WATCH_HELP);
    return EXIT.OK;
  }
  noPositionals('watch', args);
  const targets: Target[] = [];
  for (const { flag, value } of args.ordered) {
    const kind = KINDS.find((k) => k === flag);
    if (kind && !targets.some((t) => t.kind === kind && t.name === value)) {
      targets.push({ kind, name: value, state: 'pending', lines: [] });
    }
  }
  if (!targets.length) {
    throw new UsageError(
      'nothing to watch: pass --listener, --route, --cluster, --cluster-tree or --endpoints NAME',
    );
  }
  const once = args.bool('once');
  const timeoutMs = args.int('timeout', 10_000, 1);
  if (args.has('timeout') && !once) throw new UsageError('--timeout needs --once');
  // With --once the does-not-exist timer must fire before the overall deadline.
  const resourceTimeoutMs = args.int(
    'resource-timeout',
    once ? Math.ceil(timeoutMs * 0.8) : 15_000,
    1,
  );
  const resolved = resolveBootstrap(args);
  const p = palette(!args.bool('no-color') && !args.bool('json') && colorSupported());
  const session = new WatchSession(resolved, targets, io, p, {
    json: args.bool('json'),
    once,
    verbose: args.bool('verbose'),
    resourceTimeoutMs,
  });
  try {
    if (!once) {
      await untilSignal();
      return EXIT.OK;
    }
    const result = await session.runOnce(timeoutMs);
    if (result.code !== EXIT.OK) throw new CliError(result.code, result.reason);
    return EXIT.OK;
  } finally {
    session.close();
  }
}

interface SessionOptions {
  json: boolean;
  once: boolean;
  verbose: boolean;
  resourceTimeoutMs: number;
}

class WatchSession {
  private readonly client: XdsClient;
  private readonly cancels: (() => void)[] = [];
  private connected = false;
  private connectivityError: XdsError | undefined;
  private done: ((result: { code: ExitCode; reason: string }) => void) | undefined;
  private finished = false;

  constructor(
    private readonly resolved: ResolvedBootstrap,
    private readonly targets: Target[],
    private readonly io: Io,
    private readonly p: Palette,
    private readonly options: SessionOptions,
  ) {
    this.client = new XdsClient({
      ...(resolved.json === undefined ? {} : { bootstrap: resolved.json }),
      resourceTimeoutMs: options.resourceTimeoutMs,
    });
    this.listenToClient();
    if (!options.json && !options.once) {
      const what = targets.map((t) => `${t.kind} ${t.name}`).join(', ');
      io.out(
        p.dim(`watching ${what} on ${resolved.serverUri} as node "${this.nodeId}"; Ctrl-C to stop`),
      );
    }
    for (const target of targets) {
      const handle = startTarget(this.client, target, p, {
        update: (resource, lines, version) => this.onUpdate(target, resource, lines, version),
        error: (error, ambient) => this.onError(target, error, ambient),
      });
      this.cancels.push(() => handle.cancel());
    }
  }

  private get nodeId(): string {
    return this.resolved.bootstrap.node.id;
  }

  close(): void {
    this.finished = true;
    for (const cancel of this.cancels) cancel();
    this.client.close();
  }

  runOnce(timeoutMs: number): Promise<{ code: ExitCode; reason: string }> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.finish(this.deadlineResult(timeoutMs)), timeoutMs);
      this.done = (result) => {
        clearTimeout(timer);
        resolve(result);
      };
      this.check();
    });
  }

  private finish(result: { code: ExitCode; reason: string }): void {
    if (this.finished) return;
    this.finished = true;
    if (result.code === EXIT.OK && !this.options.json) {
      this.io.out(this.targets.map((t) => t.lines.join('\n')).join('\n\n'));
    }
    this.done?.(result);
  }

  private check(): void {
    if (this.options.once && this.targets.every((t) => t.state === 'ok')) {
      this.finish({ code: EXIT.OK, reason: '' });
    }
  }

  private deadlineResult(timeoutMs: number): { code: ExitCode; reason: string } {
    const server = this.resolved.serverUri;
    if (!this.connected) {
      const source = this.resolved.source;
      const where =
        source === '--server' ? 'that --server is right' : `the server_uri in ${source}`;
      const why = this.connectivityError
        ? connectivityReason(this.connectivityError)
        : 'no response (is it an xDS server?)';
      return {
        code: EXIT.UNREACHABLE,
        reason:
          `cannot reach the xDS server ${server} within ${timeoutMs} ms: ${why}; check that it ` +
          `is running and ${where}`,
      };
    }
    const waiting = this.targets.filter((t) => t.state !== 'ok').map((t) => `${t.kind} ${t.name}`);
    return {
      code: EXIT.UNREACHABLE,
      reason:
        `timed out after ${timeoutMs} ms waiting for ${waiting.join(', ')} from ${server}; ` +
        'pass a longer --timeout',
    };
  }

  private listenToClient(): void {
    const { client, io, p, options } = this;
    if (options.verbose && !options.json) logProtocol(client, p, io.out, { responses: true });
    let lastDown: string | undefined;
    client.on('connected', (e) => {
      this.connected = true;
      this.connectivityError = undefined;
      lastDown = undefined;
      if (this.finished) return;
      if (options.json) io.out(toJsonText({ event: 'connected', server: e.server }));
      else if (!options.once) io.out(p.dim(`● connected to ${e.server}`));
    });
    client.on('disconnected', (e) => {
      if (e.error) this.connectivityError = e.error;
      if (this.finished) return;
      if (options.json) {
        const message = e.error ? { message: oneLine(e.error.message) } : {};
        io.out(toJsonText({ event: 'disconnected', server: e.server, ...message }));
      } else if (!options.once) {
        const line = e.error
          ? `! cannot reach ${e.server}: ${connectivityReason(e.error)}; retrying`
          : `! stream to ${e.server} ended; reconnecting`;
        // A server that stays down fails every retry the same way: say it once.
        if (line !== lastDown) io.out(p.yellow(line));
        lastDown = line;
      }
    });
    client.on('nack', (e) => {
      if (this.finished) return;
      const type = shortType(e.typeUrl);
      if (options.json) {
        io.out(
          toJsonText({
            event: 'nack',
            server: e.server,
            type: TYPE_WORD[type] ?? e.typeUrl,
            version: e.versionInfo,
            nonce: e.nonce,
            message: oneLine(e.error),
          }),
        );
      } else if (!options.once && !options.verbose) {
        io.out(`${p.red('✗ NACK')} ${type} version ${e.versionInfo}: ${p.red(oneLine(e.error))}`);
      }
    });
  }

  private onUpdate(target: Target, resource: unknown, lines: string[], version?: string): void {
    if (this.finished) return;
    target.state = 'ok';
    target.lines = lines;
    const { io, options } = this;
    if (options.json) {
      const event = { event: 'update', type: target.kind, name: target.name, version, resource };
      io.out(toJsonText(event));
    } else if (!options.once) {
      io.out('');
      for (const line of lines) io.out(line);
    }
    this.check();
  }

  private onError(target: Target, error: XdsError, ambient: boolean): void {
    if (this.finished) return;
    const { io, p, options } = this;
    const message = oneLine(error.message);
    const code = status[error.code] ?? String(error.code);
    // A37 tree errors are UNAVAILABLE by contract; their cause says what really happened.
    const cause = isXdsError(error.cause) ? error.cause : undefined;
    const connectivity = (cause ?? error).code === status.UNAVAILABLE;
    if (connectivity && !ambient) this.connectivityError ??= error;
    if (options.json) {
      const event = {
        event: 'error',
        type: target.kind,
        name: target.name,
        code,
        ambient,
        message,
      };
      io.out(toJsonText(event));
    } else if (!options.once && !(connectivity && target.kind !== 'cluster-tree')) {
      // Connectivity errors reach every watcher: the 'disconnected' line says it once.
      const mark = ambient ? p.yellow('!') : p.red('✗');
      const keep = ambient ? p.dim(' (keeping the last good version)') : '';
      // The node is named once, when the watch starts: a line gives the reason alone.
      const reason = oneLine(error.reason);
      io.out(`${mark} ${target.kind} ${p.cyan(target.name)}: ${reason}${keep}`);
    }
    if (ambient || connectivity) return;
    target.state = 'failed';
    if (options.once)
      this.finish({ code: EXIT.RESOURCE, reason: this.resourceReason(target, error) });
  }

  private resourceReason(target: Target, error: XdsError): string {
    // Without the node id: the hint below names the node.
    const message = oneLine(error.reason);
    const cause = isXdsError(error.cause) ? error.cause : error;
    const hint =
      cause.code === status.NOT_FOUND
        ? `check the name, and that ${this.resolved.serverUri} serves node "${this.nodeId}"`
        : cause.code === status.INVALID_ARGUMENT
          ? 'the server sent an invalid resource and it was NACKed: fix it in the control plane'
          : 'see docs/cli.md';
    return `${target.kind} ${target.name}: ${message}; ${hint}`;
  }
}
