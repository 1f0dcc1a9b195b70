// ANSI colour, only for a person at a terminal: stdout is a TTY and NO_COLOR is unset
// (https://no-color.org). FORCE_COLOR=1 turns it on for pipes (screenshots, `less -R`).

export type Paint = (text: string) => string;

export interface Palette {
  readonly enabled: boolean;
  readonly bold: Paint;
  readonly dim: Paint;
  readonly red: Paint;
  readonly green: Paint;
  readonly yellow: Paint;
  readonly blue: Paint;
  readonly magenta: Paint;
  readonly cyan: Paint;
}

export function colorSupported(
  stream: { isTTY?: boolean } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '') return false;
  const force = env['FORCE_COLOR'];
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  return stream.isTTY === true && env['TERM'] !== 'dumb';
}

function sgr(open: number, close: number): Paint {
  return (text) => `\u001b[${open}m${text}\u001b[${close}m`;
}

const plain: Paint = (text) => text;

export function palette(enabled: boolean): Palette {
  if (!enabled) {
    return {
      enabled,
      bold: plain,
      dim: plain,
      red: plain,
      green: plain,
      yellow: plain,
      blue: plain,
      magenta: plain,
      cyan: plain,
    };
  }
  return {
    enabled,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    blue: sgr(34, 39),
    magenta: sgr(35, 39),
    cyan: sgr(36, 39),
  };
}
