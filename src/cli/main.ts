#!/usr/bin/env node
/**
 * The `llm-agent` command line: `status`, `revive`, `show`, `run`, `demo`. Results go to
 * stdout, progress to stderr; a user's mistake is one line and a non-zero exit, never a stack
 * trace (set `LLM_AGENT_DEBUG=1` to see one for an internal error).
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { Command, CommandIo } from './command.ts';
import { demoCommand } from './demo-command.ts';
import { EXIT } from './exit-codes.ts';
import { reviveCommand } from './revive-command.ts';
import { runCommand } from './run-command.ts';
import { showCommand } from './show-command.ts';
import { statusCommand } from './status-command.ts';
import { colourEnabled, createStyle } from './terminal-style.ts';
import { UserError } from './user-error.ts';

/** Every subcommand, in the order the help lists them. */
export const COMMANDS: Command[] = [
  statusCommand,
  reviveCommand,
  showCommand,
  runCommand,
  demoCommand,
];

/** The package's version, read from its package.json (one folder above src/ and dist/). */
export function packageVersion(): string {
  const url = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
}

function topHelp(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  return `Usage: llm-agent <command> [options]

Agent runs that survive the death of their process, and come back as themselves.

Commands:
${COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`).join('\n')}

Options:
  -h, --help     show this help (and \`llm-agent <command> --help\` for a command's)
  -v, --version  print the version

Exit codes (each command's --help says which it uses):
  0 done / nothing needs doing   1 something failed        2 a mistake in the command
  3 revivable runs exist         4 something is unreadable  5 runs are at their revival cap
  6 declined at the prompt

Environment: NO_COLOR turns colour off; OPENAI_API_KEY, ANTHROPIC_API_KEY and
OPENAI_COMPATIBLE_API_KEY are read by the model specs that need them. Docs: docs/cli.md
`;
}

/** The I/O of the real process. */
export function processIo(): CommandIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    out: createStyle(colourEnabled(process.env, process.stdout.isTTY === true)),
    err: createStyle(colourEnabled(process.env, process.stderr.isTTY === true)),
  };
}

/**
 * Run the command line `argv` (without `node` and the script) and resolve to the exit code.
 * Never throws: a {@link UserError} becomes one line on stderr, anything else one line naming
 * it as an internal error.
 *
 * @example
 * process.exitCode = await main(['status', 'runs/'], processIo());
 */
export async function main(argv: string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
      const [topic] = rest;
      const command = COMMANDS.find((candidate) => candidate.name === topic);
      io.stdout.write(command === undefined ? topHelp() : command.help);
      return EXIT.ok;
    }
    if (name === '-v' || name === '--version' || name === 'version') {
      io.stdout.write(`${packageVersion()}\n`);
      return EXIT.ok;
    }
    const command = COMMANDS.find((candidate) => candidate.name === name);
    if (command === undefined) {
      throw new UserError(
        `unknown command ${JSON.stringify(name)} (commands: ${COMMANDS.map((c) => c.name).join(', ')}; see llm-agent --help)`,
      );
    }
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UserError) {
      io.stderr.write(`llm-agent: ${error.message}\n`);
      return error.exitCode;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`llm-agent: internal error: ${message.split('\n')[0]}\n`);
    if ((io.env.LLM_AGENT_DEBUG ?? '') !== '' && error instanceof Error) {
      io.stderr.write(`${error.stack ?? ''}\n`);
    }
    return EXIT.failure;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href || isBinLink()) {
  const code = await main(process.argv.slice(2), processIo());
  process.exitCode = code;
  // A library handle left open (a timer, a socket) must not keep a finished command alive.
  setTimeout(() => process.exit(code), 2000).unref();
}

/** True when this file was started through a symlink, as npm's bin link does. */
function isBinLink(): boolean {
  try {
    const { realpathSync } = process.getBuiltinModule('node:fs');
    return pathToFileURL(realpathSync(process.argv[1] ?? '')).href === import.meta.url;
  } catch {
    return false;
  }
}
