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
  /**
   * The words that start a command the user can paste, as they ran this one (`llm-agent`,
   * `npx llm-agent-revival`, `npm run llm-agent --`; see {@link hintCommand}). Absent: `llm-agent`.
   */
  invocation?: string;
}

/**
 * A command to suggest, started the way the user runs this CLI, so it can be pasted as printed.
 *
 * @example
 * writeLine(io.stderr, `Next: ${hintCommand(io, 'status runs/')}`); // 'Next: npx llm-agent-revival status runs/'
 */
export function hintCommand(io: Pick<CommandIo, 'invocation'>, rest: string): string {
  return `${io.invocation ?? 'llm-agent'} ${rest}`;
}
