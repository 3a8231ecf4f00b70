/**
 * Colour for people, plain text for everything else. Colour is used only when the stream is a
 * terminal (or `FORCE_COLOR` is set to something other than `0`), and never when `NO_COLOR` is
 * set to a non-empty value (https://no-color.org) — `NO_COLOR` wins over `FORCE_COLOR` — or
 * when `FORCE_COLOR` is `0` or `false`, even on a terminal.
 *
 * @module
 */
import { displayWidth } from './display-width.ts';

/**
 * The few styles the CLI uses; each returns its input unchanged when colour is off.
 *
 * @example
 * const style: Style = createStyle(colourEnabled(process.env, process.stdout.isTTY === true));
 * process.stdout.write(`${style.bold('main.jsonl')} ${style.yellow('revivable')}\n`);
 */
export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  magenta(text: string): string;
}

/**
 * Whether to colour a stream, from the environment and whether the stream is a terminal.
 *
 * @example
 * colourEnabled(process.env, process.stdout.isTTY === true);
 */
export function colourEnabled(
  env: Record<string, string | undefined>,
  isTerminal: boolean,
): boolean {
  if ((env.NO_COLOR ?? '') !== '') return false;
  const force = env.FORCE_COLOR;
  // FORCE_COLOR=0 (or false) is a request for no colour, even on a terminal.
  if (force === '0' || force === 'false') return false;
  if (force !== undefined && force !== '') return true;
  return isTerminal && env.TERM !== 'dumb';
}

/**
 * A {@link Style} that colours when `enabled`.
 *
 * @example
 * const style = createStyle(colourEnabled(process.env, process.stdout.isTTY === true));
 * console.log(style.red('unreadable'));
 */
export function createStyle(enabled: boolean): Style {
  const wrap =
    (open: number, close: number) =>
    (text: string): string =>
      enabled && text !== '' ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return {
    enabled,
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
    magenta: wrap(35, 39),
  };
}

/**
 * Text without its colour codes.
 *
 * @example
 * stripColour('\u001b[31mred\u001b[39m'); // 'red'
 */
export function stripColour(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching the escape is the point
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}

/**
 * The columns text takes on a terminal once its colour codes are left out: wide characters
 * count two, combining marks none (see display-width.ts). Text from a transcript must have
 * been made safe (terminal-safe.ts) before it was coloured.
 *
 * @example
 * visibleWidth('\u001b[31mred\u001b[39m'); // 3
 * visibleWidth('報告'); // 4
 */
export function visibleWidth(text: string): number {
  return displayWidth(stripColour(text));
}
