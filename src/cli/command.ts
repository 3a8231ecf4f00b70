import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { CommandIo } from '../runs/command-io.ts';
import { OptionError, optionProblem } from './option-error.ts';
import { UserError } from '../runs/user-error.ts';

/**
 * One subcommand of `llm-agent`.
 *
 * @example
 * process.exitCode = await statusCommand.run(['runs/', '--json'], io);
 */
export interface Command {
  name: string;
  /** The full `--help` text. */
  help: string;
  /** Runs the command; resolves to the exit code. Throws {@link UserError} for the user's mistakes. */
  run(argv: string[], io: CommandIo): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `parseArgs` with strict checking, whose complaints become one-line {@link OptionError}s naming
 * the command (printed with its usage).
 *
 * @example
 * const { values, positionals } = parseCommandLine('status', argv, { json: { type: 'boolean' } });
 */
export function parseCommandLine<O extends Options>(command: string, argv: string[], options: O) {
  try {
    return parseArgs({
      args: argv,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    // One phrase; main adds the command's usage line.
    throw new OptionError(command, optionProblem(error));
  }
}

/**
 * A non-negative integer option, or a one-line {@link UserError} naming it.
 *
 * @example
 * const cap = integerOption('status', '--max-revivals', values['max-revivals'], 3);
 */
export function integerOption(
  command: string,
  name: string,
  value: string | undefined,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UserError(
      `${command}: ${name} wants a whole number ≥ 0, not ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
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
