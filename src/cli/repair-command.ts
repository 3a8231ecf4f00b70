import { readdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { type RepairOutcome, repairSession } from '../repair/repair-session.ts';
import { type Command, parseCommandLine } from './command.ts';
import { EXIT } from '../render/exit-codes.ts';
import { jsonText } from '../render/json-text.ts';
import { terminalSafe } from '../render/terminal-safe.ts';
import { UserError } from '../runs/user-error.ts';

/** The folders `repair --scan` looks in without a DIR, below the home folder. */
const DEFAULT_FOLDERS = ['.claude/projects', '.codex/sessions', '.pi/agent/sessions'];
/** A scan stops after this many files: a courtesy listing, bounded in time. */
const MAX_SCANNED = 20_000;

/**
 * `llm-agent repair`: make other agents' sessions that a crash cut off mid-tool resumable,
 * honestly (docs/repair.md).
 *
 * @example
 * await repairCommand.run(['session.jsonl', '--dry-run'], io);
 */
export const repairCommand: Command = {
  name: 'repair',
  help: `Usage: llm-agent repair FILE… [--dry-run] [--json] [--force]
       llm-agent repair --scan [DIR…] [--json]

Repair a Claude Code, Codex or pi session that a crash cut off while a tool ran: every tool
call without a result gets one, in the client's own format, marked as an error and saying
that the outcome is unknown and the call was NOT retried, so the model checks before it
assumes. When the client resumes the session, it sends those answers to the model.

Only appends: the file's bytes stay a prefix of what it becomes, and a byte-exact backup
(FILE.bak-TIME) is written first. A torn last line is copied to FILE.torn-OFFSET and left in
place. Refused, writing nothing: a format or version this version of llm-agent was not
tested with, and a file its client may still be writing (open in another process, or
changed in the last 5 seconds) unless --force. A session that needs nothing is left alone.

--scan lists the sessions below each DIR (default: ~/.claude/projects, ~/.codex/sessions,
~/.pi/agent/sessions) that a repair would change; it writes nothing.

Options:
  --dry-run   say what would be appended, write nothing
  --json      print the outcomes as JSON
  --force     repair a file even though it looks live
  --scan      list broken sessions instead of repairing FILEs
  -h, --help  show this help

Exit codes: 0 every FILE repaired or needing nothing (--scan: nothing broken); 3 (--scan, or
--dry-run) sessions need repair; 4 a FILE was refused (unknown format or version, a shape
it cannot repair honestly); 7 a FILE looks live; 1 an I/O error; 2 a bad option.
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandLine('repair', argv, {
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      force: { type: 'boolean' },
      scan: { type: 'boolean' },
    });
    if (values.help === true) {
      io.stdout.write(this.help);
      return EXIT.ok;
    }
    const json = values.json === true;
    if (values.scan === true) {
      if (values.force === true || values['dry-run'] === true) {
        throw new UserError('repair: --scan writes nothing; it takes no --force or --dry-run');
      }
      const home = io.env.HOME ?? '';
      const folders =
        positionals.length > 0
          ? positionals.map((folder) => resolve(io.cwd, folder))
          : DEFAULT_FOLDERS.map((folder) => join(home, folder));
      const files = await sessionFiles(folders);
      const outcomes: RepairOutcome[] = [];
      for (const file of files) {
        const outcome = await repairSession(file, { dryRun: true });
        if (outcome.status === 'refused' && outcome.reason === 'unknown-format') continue;
        outcomes.push(outcome);
      }
      if (json)
        io.stdout.write(`${jsonText({ scanned: files.length, sessions: outcomes }, io.stdout)}\n`);
      else io.stdout.write(scanText(outcomes, files.length, io.cwd));
      if (outcomes.some((outcome) => outcome.status === 'planned')) return EXIT.revivable;
      return EXIT.ok;
    }
    if (positionals.length === 0) throw new UserError('repair: give the session FILEs to repair');
    const outcomes: RepairOutcome[] = [];
    for (const file of positionals) {
      const options = {
        ...(values['dry-run'] === true ? { dryRun: true } : {}),
        ...(values.force === true ? { force: true } : {}),
      };
      outcomes.push(await repairSession(resolve(io.cwd, file), options));
    }
    if (json) io.stdout.write(`${jsonText(outcomes, io.stdout)}\n`);
    else for (const outcome of outcomes) io.stdout.write(outcomeText(outcome, io.cwd));
    return exitCode(outcomes);
  },
};

function exitCode(outcomes: readonly RepairOutcome[]): number {
  const refusals = outcomes.flatMap((outcome) => (outcome.status === 'refused' ? [outcome] : []));
  if (refusals.some((outcome) => outcome.reason === 'io-error')) return EXIT.failure;
  if (refusals.some((outcome) => outcome.reason === 'live')) return EXIT.claimed;
  if (refusals.length > 0) return EXIT.unreadable;
  if (outcomes.some((outcome) => outcome.status === 'planned')) return EXIT.revivable;
  return EXIT.ok;
}

/** One file's outcome for a person: every string from the file made terminal-safe. */
function outcomeText(outcome: RepairOutcome, cwd: string): string {
  const name = terminalSafe(shown(outcome.path, cwd));
  const format =
    outcome.status === 'refused' && outcome.detection === undefined
      ? ''
      : ` (${terminalSafe(`${outcome.detection?.format} ${outcome.detection?.version}`)})`;
  const calls = (list: readonly { callId: string; toolName: string }[]) =>
    list.map((call) => terminalSafe(`${call.toolName} ${call.callId}`)).join(', ');
  switch (outcome.status) {
    case 'repaired': {
      const lines = [
        `repaired ${name}${format}: answered ${outcome.calls.length} interrupted call${outcome.calls.length === 1 ? '' : 's'} (${calls(outcome.calls)})`,
        `  backup: ${terminalSafe(shown(outcome.backup, cwd))}`,
      ];
      if (outcome.sidecar !== undefined) {
        lines.push(`  torn last line copied to ${terminalSafe(shown(outcome.sidecar, cwd))}`);
      }
      lines.push(...skippedNote(outcome.skipped, outcome.detection.format));
      return `${lines.join('\n')}\n`;
    }
    case 'planned': {
      const lines = [
        `would repair ${name}${format}: ${outcome.calls.length} interrupted call${outcome.calls.length === 1 ? '' : 's'} (${calls(outcome.calls)})`,
      ];
      if (outcome.tornBytes > 0) {
        lines.push(
          `  a torn last line (${outcome.tornBytes} bytes) would be copied to a sidecar, then a newline appended`,
        );
      }
      lines.push(...skippedNote(outcome.skipped, outcome.detection.format));
      lines.push(
        `  would append ${outcome.append.length} line${outcome.append.length === 1 ? '' : 's'}:`,
      );
      for (const line of outcome.append) lines.push(`  + ${terminalSafe(line)}`);
      return `${lines.join('\n')}\n`;
    }
    case 'clean': {
      const lines = [`nothing to repair in ${name}${format}: ${terminalSafe(outcome.detail)}`];
      if (outcome.tornBytes > 0) {
        lines.push(
          `  a torn last line (${outcome.tornBytes} bytes) was not read: a call it held cannot be seen`,
        );
      }
      lines.push(...skippedNote(outcome.skipped, outcome.detection.format));
      return `${lines.join('\n')}\n`;
    }
    case 'refused':
      return `not repaired (${outcome.reason}): ${terminalSafe(outcome.detail)}\n`;
  }
}

/** The lines that are not JSON, named: the repair reads past them, as the client does. */
function skippedNote(skipped: readonly number[], client: string): string[] {
  if (skipped.length === 0) return [];
  const shownLines = skipped.slice(0, 10).join(', ');
  const more = skipped.length > 10 ? ` and ${skipped.length - 10} more` : '';
  return [
    `  note: line${skipped.length === 1 ? '' : 's'} ${shownLines}${more} ${skipped.length === 1 ? 'is' : 'are'} not JSON: skipped, as ${client} skips ${skipped.length === 1 ? 'it' : 'them'}; a result written there cannot be seen`,
  ];
}

function scanText(outcomes: readonly RepairOutcome[], scanned: number, cwd: string): string {
  const broken = outcomes.filter((outcome) => outcome.status === 'planned');
  const lines: string[] = [];
  for (const outcome of outcomes) {
    const state =
      outcome.status === 'planned'
        ? `broken: ${outcome.calls.length} call${outcome.calls.length === 1 ? '' : 's'} unanswered`
        : outcome.status === 'refused'
          ? `refused (${outcome.reason})`
          : 'ok';
    const format =
      outcome.status === 'refused' && outcome.detection === undefined
        ? '?'
        : `${outcome.detection?.format} ${outcome.detection?.version}`;
    lines.push(
      `${terminalSafe(state).padEnd(28)} ${terminalSafe(format).padEnd(22)} ${terminalSafe(shown(outcome.path, cwd))}`,
    );
  }
  lines.push('');
  lines.push(
    `${outcomes.length} session${outcomes.length === 1 ? '' : 's'} of ${scanned} file${scanned === 1 ? '' : 's'}: ${broken.length} broken.`,
  );
  if (broken.length > 0)
    lines.push('Next: llm-agent repair FILE… (--dry-run first to see the lines)');
  return `${lines.join('\n')}\n`;
}

function shown(path: string, cwd: string): string {
  const near = relative(cwd, path);
  return near.startsWith('..') ? path : near;
}

/** The `*.jsonl` files below `folders` (missing folders skipped), sorted, bounded. */
async function sessionFiles(folders: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const folder of folders) {
    let entries: string[];
    try {
      entries = await readdir(folder, { recursive: true, encoding: 'utf8' });
    } catch {
      continue;
    }
    for (const entry of entries.sort()) {
      if (!entry.endsWith('.jsonl')) continue;
      found.push(join(folder, entry));
      if (found.length >= MAX_SCANNED) return found;
    }
  }
  return found;
}
