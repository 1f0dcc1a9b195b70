// What the command tells a person when something goes wrong: one line, and an exit code.

/** The exit codes of every command (documented in docs/cli.md). */
export const EXIT = {
  /** Done: every watched thing was delivered, or the command finished. */
  OK: 0,
  /** A resource does not exist, failed validation with nothing cached, or an unexpected error. */
  RESOURCE: 1,
  /** Bad flags, a bad bootstrap or a bad snapshot file. */
  USAGE: 2,
  /** The management server could not be reached, or did not answer within --timeout. */
  UNREACHABLE: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the user can act on: printed as one line on stderr, then exit with `exitCode`. */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
  ) {
    super(message);
  }
}

/** Bad flags or arguments: exit 2. The message should say what to type instead. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(EXIT.USAGE, message);
  }
}

/** Library messages can span lines; a person gets one. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

export function messageOf(error: unknown): string {
  return oneLine(error instanceof Error ? error.message : String(error));
}
