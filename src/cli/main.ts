#!/usr/bin/env node
/**
 * The `llm-agent` command line: `status`, `revive`, `show`, `run`, `demo`. Results go to
 * stdout, progress to stderr; a user's mistake is one line and a non-zero exit, never a stack
 * trace (set `LLM_AGENT_DEBUG=1` to see one for an internal error).
 *
 * @module
 */
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Command } from './command.ts';
import { type CommandIo, hintCommand } from '../runs/command-io.ts';
import { EXIT } from '../render/exit-codes.ts';
import { invocationOf } from './invocation.ts';
import { OptionError, usageOf } from './option-error.ts';
import { terminalSafe } from '../render/terminal-safe.ts';
import { colourEnabled, createStyle } from '../render/terminal-style.ts';
import { UserError } from '../runs/user-error.ts';

/**
 * A subcommand, loaded only when it is used: `--version` and `status` stay quick to start.
 *
 * @example
 * const entry: CommandEntry = {
 *   name: 'show', summary: 'print a run’s conversation',
 *   load: async () => (await import('./show-command.ts')).showCommand,
 * };
 */
export interface CommandEntry {
  name: string;
  /** One line for the top-level help. */
  summary: string;
  load(): Promise<Command>;
}

/**
 * Every subcommand, in the order the help lists them.
 *
 * @example
 * const command = await COMMANDS.find((entry) => entry.name === 'status')?.load();
 */
export const COMMANDS: CommandEntry[] = [
  {
    name: 'status',
    summary: 'show every run below PATHs as a tree: state, reason, revivals, open calls, tokens',
    load: async () => (await import('./status-command.ts')).statusCommand,
  },
  {
    name: 'revive',
    summary: 'plan, confirm, revive (children first) and run interrupted runs to the end',
    load: async () => (await import('./revive-command.ts')).reviveCommand,
  },
  {
    name: 'show',
    summary: 'print a run’s conversation as the model sees it (optionally with the envelopes)',
    load: async () => (await import('./show-command.ts')).showCommand,
  },
  {
    name: 'ui',
    summary: 'a local web view of the runs: tree, conversations, the revival plan and Confirm',
    load: async () => (await import('./ui-command.ts')).uiCommand,
  },
  {
    name: 'run',
    summary: 'start a run from an agent-definition module and run it to the end',
    load: async () => (await import('./run-command.ts')).runCommand,
  },
  {
    name: 'worker',
    summary: 'take runs from the PostgreSQL store and run them; revive or park dead ones',
    load: async () => (await import('./worker-command.ts')).workerCommand,
  },
  {
    name: 'export',
    summary: 'write a run of the PostgreSQL store as a transcript file, byte for byte',
    load: async () => (await import('./export-command.ts')).exportCommand,
  },
  {
    name: 'import',
    summary: 'bring a transcript file into the PostgreSQL store, byte for byte',
    load: async () => (await import('./import-command.ts')).importCommand,
  },
  {
    name: 'db',
    summary: 'migrate the PostgreSQL store’s schema to this version (llm-agent db migrate)',
    load: async () => (await import('./db-command.ts')).dbCommand,
  },
  {
    name: 'repair',
    summary: 'make a Claude Code, Codex or pi session cut off mid-tool resumable, honestly',
    load: async () => (await import('./repair-command.ts')).repairCommand,
  },
  {
    name: 'demo',
    summary: 'the offline demo: a run SIGKILLed mid-tool-call, then revived (no API key)',
    load: async () => (await import('./demo-command.ts')).demoCommand,
  },
];

/**
 * The command a mistyped name most likely meant: the one within two edits (a transposition
 * counts as one), or that the name starts; null when none is that close.
 *
 * @example
 * nearestCommand('staus'); // 'status'
 */
export function nearestCommand(typed: string): string | null {
  const word = typed.toLowerCase();
  let best: { name: string; distance: number } | null = null;
  for (const { name } of COMMANDS) {
    const distance = word.length >= 3 && name.startsWith(word) ? 1 : editDistance(word, name);
    if (distance <= 2 && (best === null || distance < best.distance)) best = { name, distance };
  }
  return best?.name ?? null;
}

/** Optimal string alignment distance: insertions, deletions, substitutions, transpositions. */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2 || a.length > 64) return Number.POSITIVE_INFINITY;
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i] as number[];
      const up = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(
        (up[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (up[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j] as number, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/**
 * The package's version, read from its package.json (one folder above src/ and dist/).
 *
 * @example
 * packageVersion(); // '0.3.0'
 */
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
  6 declined at the prompt       130 stopped by Ctrl-C or SIGTERM (the runs stay revivable)

Environment: NO_COLOR or FORCE_COLOR=0 turns colour off, FORCE_COLOR=1 on; COLUMNS sets the
width status fits; OPENAI_API_KEY, ANTHROPIC_API_KEY and OPENAI_COMPATIBLE_API_KEY are read
by the model specs that need them. The commands this CLI suggests begin the way it was run
(llm-agent, npx llm-agent-revival, npm run llm-agent --), so they can be pasted as printed.
Docs: ${fileURLToPath(new URL('../../docs/cli.md', import.meta.url))}
`;
}

/**
 * The I/O of the real process: its streams, environment and folder, colour decided per
 * stream, and Ctrl-C.
 *
 * @example
 * process.exitCode = await main(process.argv.slice(2), processIo());
 */
export function processIo(): CommandIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    out: createStyle(colourEnabled(process.env, process.stdout.isTTY === true)),
    err: createStyle(colourEnabled(process.env, process.stderr.isTTY === true)),
    invocation: invocationOf(process.env, process.argv[1]),
    onInterrupt(handler) {
      // The first SIGINT or SIGTERM asks the runs to stop cleanly; a second one is the user
      // (or the supervisor) insisting.
      const signals = ['SIGINT', 'SIGTERM'] as const;
      const first = (signal: NodeJS.Signals): void => {
        for (const name of signals) {
          process.off(name, first);
          process.once(name, () => process.exit(EXIT.interrupted));
        }
        handler(signal);
      };
      for (const name of signals) process.on(name, first);
      return () => {
        for (const name of signals) process.off(name, first);
      };
    },
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
  let command: Command | undefined;
  try {
    if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
      const [topic] = rest;
      const entry = COMMANDS.find((candidate) => candidate.name === topic);
      io.stdout.write(entry === undefined ? topHelp() : (await entry.load()).help);
      return EXIT.ok;
    }
    if (name === '-v' || name === '--version' || name === 'version') {
      io.stdout.write(`${packageVersion()}\n`);
      return EXIT.ok;
    }
    const entry = COMMANDS.find((candidate) => candidate.name === name);
    if (entry === undefined) {
      const near = nearestCommand(name);
      const guess = near === null ? '' : `did you mean ${near}? `;
      throw new UserError(
        `unknown command ${JSON.stringify(name)} (${guess}commands: ${COMMANDS.map((c) => c.name).join(', ')}; see ${hintCommand(io, '--help')})`,
      );
    }
    command = await entry.load();
    return await command.run(rest, io, main);
  } catch (error) {
    // A message may quote a transcript (an agent type, a line's damage): made safe, one line.
    if (error instanceof UserError) {
      const usage =
        error instanceof OptionError && command !== undefined
          ? `. Usage: ${usageOf(command.help)}`
          : '';
      io.stderr.write(`llm-agent: ${terminalSafe(error.message)}${usage}\n`);
      return error.exitCode;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`llm-agent: internal error: ${terminalSafe(message.split('\n')[0] ?? '')}\n`);
    if ((io.env.LLM_AGENT_DEBUG ?? '') !== '' && error instanceof Error) {
      io.stderr.write(`${error.stack ?? ''}\n`);
    }
    return EXIT.failure;
  }
}

if (isEntryPoint()) {
  // A reader that stops reading (`llm-agent show run.jsonl | head`) is no failure: the rest of
  // the output goes nowhere, and the command carries on (a revive is not cut short by a pager)
  // to the exit code it would have had — never a stack trace.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', ignoreClosedReader);
  const code = await main(process.argv.slice(2), processIo());
  process.exitCode = code;
  // A library handle left open (a timer, a socket) must not keep a finished command alive.
  setTimeout(() => process.exit(code), 2000).unref();
}

/** Swallows the error of writing to a reader that has gone; any other error is thrown. */
function ignoreClosedReader(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
}

/** True when this file is the script node was started with, directly or through npm's bin link. */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return pathToFileURL(realpathSync(script)).href === import.meta.url;
  } catch {
    return false;
  }
}
