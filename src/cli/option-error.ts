import { UserError } from '../runs/user-error.ts';

/**
 * A mistake in a command's options (an unknown option, a missing value): printed as one line
 * with the usage of that command, so that the fix is on the screen.
 *
 * @example
 * throw new OptionError('status', 'unknown option --bogus');
 * // llm-agent: status: unknown option --bogus. Usage: llm-agent status [PATH…] [--json] …
 */
export class OptionError extends UserError {
  readonly command: string;

  constructor(command: string, problem: string) {
    super(`${command}: ${problem}`);
    this.name = 'OptionError';
    this.command = command;
  }
}

/**
 * One friendly phrase for what `util.parseArgs` complained about (its messages span lines and
 * give advice about `--` that rarely applies).
 *
 * @example
 * optionProblem({ code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION', message: "Unknown option '--x'. …" });
 * // 'unknown option --x'
 */
export function optionProblem(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const option = /'(-{1,2}[^' <]*)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option !== undefined) {
    return `unknown option ${option}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option !== undefined) {
    if (/does not take an argument/.test(message)) return `${option} takes no value`;
    if (/ambiguous/.test(message)) {
      return `${option} needs a value (one that starts with - is written ${option}=-…)`;
    }
    return `${option} needs a value`;
  }
  return message.split('\n')[0]?.replace(/\.$/, '') ?? message;
}

/**
 * The usage line of a command's help (its first line, without `Usage: `).
 *
 * @example
 * usageOf('Usage: llm-agent show PATH [--json]\n\nPrint …'); // 'llm-agent show PATH [--json]'
 */
export function usageOf(help: string): string {
  return (help.split('\n')[0] ?? '').replace(/^Usage:\s*/, '');
}
