// The `xds-client` command: dispatch to a subcommand, and turn every failure into one line on
// stderr and an exit code (docs/cli.md). Nothing a person meets prints a stack trace.
import { isXdsError } from '../errors';
import { VERSION } from '../version';
import { runBootstrap } from './bootstrap-cmd';
import { runCsds } from './csds-cmd';
import { runDemo } from './demo';
import { CliError, EXIT, UsageError, messageOf } from './errors';
import { BOOTSTRAP_HELP, CSDS_HELP, DEMO_HELP, MAIN_HELP, SERVE_HELP, WATCH_HELP } from './help';
import { runServe } from './serve';
import { runWatch, type Io } from './watch';

const HELP: Readonly<Record<string, string>> = {
  demo: DEMO_HELP,
  watch: WATCH_HELP,
  serve: SERVE_HELP,
  bootstrap: BOOTSTRAP_HELP,
  csds: CSDS_HELP,
};

const defaultIo: Io = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
};

/** Runs the command and resolves with its exit code; never rejects. */
export async function main(argv: readonly string[], io: Io = defaultIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (error) {
    return report(error, io);
  }
}

async function dispatch(argv: readonly string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case 'help':
    case '--help':
    case '-h': {
      const topic = command === 'help' ? rest[0] : undefined;
      if (topic !== undefined && HELP[topic] === undefined) {
        throw new UsageError(`no command "${topic}": try xds-client --help`);
      }
      io.out(topic === undefined ? MAIN_HELP : HELP[topic]!);
      return EXIT.OK;
    }
    case '--version':
    case '-V':
    case 'version':
      io.out(VERSION);
      return EXIT.OK;
    case 'demo':
      return runDemo(rest, io);
    case 'watch':
      return runWatch(rest, io);
    case 'serve':
      return runServe(rest, io);
    case 'bootstrap':
      return runBootstrap(rest, io.out);
    case 'csds':
      return runCsds(rest, io);
    default:
      throw new UsageError(
        command.startsWith('-')
          ? `unknown option ${command}: a command comes first (demo, watch, serve, bootstrap, csds); see xds-client --help`
          : `unknown command "${command}": the commands are demo, watch, serve, bootstrap, csds; see xds-client --help`,
      );
  }
}

/** One line on stderr; the exit code says what kind of failure it was. */
export function report(error: unknown, io: Io = defaultIo): number {
  if (error instanceof CliError) {
    io.err(`xds-client: ${messageOf(error)}`);
    return error.exitCode;
  }
  if (isXdsError(error)) {
    io.err(`xds-client: ${messageOf(error)}`);
    return EXIT.RESOURCE;
  }
  const debug = process.env['XDS_CLIENT_DEBUG'];
  if (debug && error instanceof Error && error.stack) io.err(error.stack);
  io.err(
    `xds-client: unexpected error: ${messageOf(error)}; this is a bug, please report it ` +
      '(XDS_CLIENT_DEBUG=1 shows the stack trace)',
  );
  return EXIT.RESOURCE;
}

/** The process entry point (bin.ts): exit with the command's code once output is flushed. */
export function run(argv: readonly string[] = process.argv.slice(2)): void {
  const fail = (error: unknown) => exit(report(error));
  // `xds-client watch ... | head`: the reader left; that is not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(EXIT.OK);
    else fail(e);
  });
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
  void main(argv).then(exit);
}

function exit(code: number): void {
  // Writes to pipes and files are synchronous on POSIX, but a TTY may still be draining.
  process.stdout.write('', () => process.exit(code));
}
