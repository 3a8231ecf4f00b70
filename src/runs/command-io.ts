import type { Style } from '../render/terminal-style.ts';

/**
 * What a command reads and writes: injected, so that tests and the demo can run commands
 * in-process.
 *
 * @example
 * const io: CommandIo = {
 *   stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env,
 *   cwd: process.cwd(), out: createStyle(false), err: createStyle(false),
 * };
 */
export interface CommandIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  cwd: string;
  /** Styles for stdout and stderr (each decided on its own stream). */
  out: Style;
  err: Style;
  /**
   * Subscribe to the user's interrupt (Ctrl-C, or SIGTERM from whoever manages the process)
   * while runs are running; the handler gets the signal's name. Returns the unsubscribe.
   * Absent when nobody can interrupt (tests running commands in-process).
   */
  onInterrupt?: (handler: (signal: string) => void) => () => void;
}

/**
 * Write a line.
 *
 * @example
 * writeLine(io.stdout, 'Nothing to revive.');
 */
export function writeLine(stream: NodeJS.WritableStream, text = ''): void {
  stream.write(`${text}\n`);
}
