import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { readProcessTable } from '../repair/process-table.ts';
import { repairFile } from '../repair/repair-file.ts';
import { TESTED_RELEASES } from '../repair/tested-releases.ts';
import type { RepairOutcome } from '../repair/repair-session.ts';
import { type Command, parseCommandLine } from './command.ts';
import { EXIT } from '../render/exit-codes.ts';
import { jsonText } from '../render/json-text.ts';
import { terminalSafe } from '../render/terminal-safe.ts';
import { UserError } from '../runs/user-error.ts';
import { type CommandIo, hintCommand } from '../runs/command-io.ts';
import { quote } from '../render/format-status.ts';

/** The folders `repair --scan` looks in without a DIR, below the home folder. */
const DEFAULT_FOLDERS = [
  '.claude/projects',
  '.codex/sessions',
  '.pi/agent/sessions',
  '.gemini/tmp',
  '.local/share/opencode',
];
/** A scan stops after this many files: a courtesy listing, bounded in time. */
const MAX_SCANNED = 20_000;

/** The tested releases of a client that records its version, as its help names them. */
function range(format: 'claude-code' | 'codex' | 'opencode'): string {
  const names = { 'claude-code': 'Claude Code', codex: 'Codex', opencode: 'opencode' };
  const tested = TESTED_RELEASES[format];
  return `${names[format]} ${tested[0]} to ${tested.at(-1)}`;
}

/**
 * `llm-agent repair`: make other agents' sessions that a crash cut off mid-tool resumable,
 * honestly (docs/repair.md).
 *
 * @example
 * await repairCommand.run(['session.jsonl', '--dry-run'], io);
 */
export const repairCommand: Command = {
  name: 'repair',
  help: `Usage: llm-agent repair FILE… [--dry-run] [--json] [--force] [--allow-newer]
       llm-agent repair --scan [DIR…] [--json] [--allow-newer]

Repair a Claude Code, Codex, pi or Gemini CLI session, or an opencode database, that a crash
cut off while a tool ran: every tool call without a result gets one, in the client's own
format, marked as an error and saying that the outcome is unknown and the call was NOT
retried, so the model checks before it assumes. When the client resumes the session, it
sends those answers to the model.

A session file is only appended to: its bytes stay a prefix of what it becomes, and a
byte-exact backup (FILE.bak-TIME) is written first. An opencode database (opencode.db) is
changed in one transaction after a consistent backup (FILE.bak-TIME, SQLite's backup API),
and only while no process has it open. A torn last line is copied to FILE.torn-OFFSET and
left in place.

Refused, writing nothing: a format or version this version of llm-agent was not tested
with (tested: ${range('claude-code')}, ${range('codex')},
${range('opencode')}; a newer Claude Code or Codex release only with
--allow-newer), a file holding lines of two clients, and a session its client may still
own — a running process of that client whose command line names the session, whose
working folder is the session's, or that holds a file in the session's folder; a file open
in any process; a file changed in the last 5 seconds. Stop the client, or wait for its tool
to finish, then repair again; --force repairs anyway, at the risk of answering a call that
is still running. A session that needs nothing is left alone; one its client already
resumed without a repair is reported with what the model was told.

--scan lists the sessions below each DIR (default: ~/.claude/projects, ~/.codex/sessions,
~/.pi/agent/sessions, ~/.gemini/tmp, ~/.local/share/opencode) that a repair would change,
with the verdict a repair would give; it writes nothing, never follows a symbolic link, and
stops after 20000 files.

Options:
  --dry-run   say what would be appended (ids and times are made at write time), write nothing
  --json      print the outcomes as JSON
  --force     repair a session even though its client may still own it
  --allow-newer
              repair a session of a Claude Code or Codex release newer than the newest
              tested, but only if every line it reads and writes is of a shape the tests
              have seen (otherwise refused: exit 4)
  --scan      list broken sessions instead of repairing FILEs
  -h, --help  show this help

Exit codes:
  0  every FILE repaired or needing nothing (--scan: nothing broken)
  1  an I/O error; a repair another process appended into (the output says what to check);
     an internal error
  2  a bad option, or a --scan DIR that does not exist (without DIR: none of the default
     folders exists)
  3  (--scan, --dry-run) sessions need repair
  4  a FILE was refused (missing or not a regular file, unknown or mixed format, untested
     version, a shape it cannot repair honestly,
     with --allow-newer a line of a shape the tests never saw) or was already resumed
     without a repair
  7  a FILE looks live (its client may still own it): stop the client or wait for its
     tool, then repair again
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandLine('repair', argv, {
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      force: { type: 'boolean' },
      scan: { type: 'boolean' },
      'allow-newer': { type: 'boolean' },
    });
    const allowNewer = values['allow-newer'] === true ? { allowNewer: true } : {};
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
      if (positionals.length > 0) {
        for (const folder of folders) {
          const kind = await lstat(folder).catch(() => null);
          if (kind === null) throw new UserError(`repair --scan: ${folder}: no such folder`);
          if (!kind.isDirectory() && !kind.isSymbolicLink()) {
            throw new UserError(`repair --scan: ${folder}: not a folder`);
          }
        }
      } else {
        // A default folder of a client the user does not have is skipped; none at all would
        // make "0 sessions" a claim about folders that were never there.
        const present = await Promise.all(
          folders.map(async (folder) => (await lstat(folder).catch(() => null)) !== null),
        );
        if (!present.includes(true)) {
          throw new UserError(
            `repair --scan: none of the default folders exists (${folders.join(', ')}): name the folder to scan`,
          );
        }
      }
      const { files, cut } = await sessionFiles(folders);
      const table = await readProcessTable();
      const outcomes: RepairOutcome[] = [];
      for (const file of files) {
        const outcome = await repairFile(file, {
          dryRun: true,
          processTable: async () => table,
          ...allowNewer,
        });
        if (outcome.status === 'refused' && outcome.reason === 'unknown-format') continue;
        outcomes.push(outcome);
      }
      if (json)
        io.stdout.write(
          `${jsonText({ scanned: files.length, ...(cut === undefined ? {} : { cut }), sessions: outcomes }, io.stdout)}\n`,
        );
      else io.stdout.write(scanText(outcomes, files.length, io, cut));
      if (outcomes.some((outcome) => outcome.status === 'planned')) return EXIT.revivable;
      return EXIT.ok;
    }
    if (positionals.length === 0) throw new UserError('repair: give the session FILEs to repair');
    const outcomes: RepairOutcome[] = [];
    for (const file of positionals) {
      const options = {
        ...(values['dry-run'] === true ? { dryRun: true } : {}),
        ...(values.force === true ? { force: true } : {}),
        ...allowNewer,
      };
      outcomes.push(await repairFile(resolve(io.cwd, file), options));
    }
    if (json) io.stdout.write(`${jsonText(outcomes, io.stdout)}\n`);
    else for (const outcome of outcomes) io.stdout.write(outcomeText(outcome, io.cwd));
    return exitCode(outcomes);
  },
};

function exitCode(outcomes: readonly RepairOutcome[]): number {
  const refusals = outcomes.flatMap((outcome) => (outcome.status === 'refused' ? [outcome] : []));
  if (refusals.some((outcome) => outcome.reason === 'io-error')) return EXIT.failure;
  if (outcomes.some((outcome) => outcome.status === 'repaired' && outcome.interleaved)) {
    return EXIT.failure;
  }
  if (refusals.some((outcome) => outcome.reason === 'live')) return EXIT.claimed;
  if (refusals.length > 0) return EXIT.unreadable;
  if (outcomes.some((outcome) => outcome.status === 'resumed')) return EXIT.unreadable;
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
      lines.push(...skippedNote(outcome.skipped, outcome.skippedCount, outcome.detection.format));
      if (outcome.forced !== undefined) lines.push(`  warning: ${terminalSafe(outcome.forced)}`);
      if (outcome.interleaved !== undefined) {
        lines.push(`  warning: ${terminalSafe(outcome.interleaved)}`);
      }
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
      lines.push(...skippedNote(outcome.skipped, outcome.skippedCount, outcome.detection.format));
      if (outcome.forced !== undefined) lines.push(`  warning: ${terminalSafe(outcome.forced)}`);
      lines.push(
        `  would append ${outcome.append.length} line${outcome.append.length === 1 ? '' : 's'} like these (fresh ids and the time are made when it writes):`,
      );
      for (const line of outcome.append) lines.push(`  + ${terminalSafe(line)}`);
      return `${lines.join('\n')}\n`;
    }
    case 'resumed':
      return `${[
        `not repaired ${name}${format}: already resumed without a repair — ${terminalSafe(outcome.told)}`,
        `  ${terminalSafe(outcome.detail)}`,
        ...skippedNote(outcome.skipped, outcome.skippedCount, outcome.detection.format),
      ].join('\n')}\n`;
    case 'clean': {
      const lines = [`nothing to repair in ${name}${format}: ${terminalSafe(outcome.detail)}`];
      if (outcome.tornBytes > 0) {
        lines.push(
          `  a torn last line (${outcome.tornBytes} bytes) was not read: a call it held cannot be seen`,
        );
      }
      lines.push(...skippedNote(outcome.skipped, outcome.skippedCount, outcome.detection.format));
      return `${lines.join('\n')}\n`;
    }
    case 'refused':
      return `not repaired (${outcome.reason}): ${terminalSafe(outcome.detail)}\n`;
  }
}

/** The lines that are not JSON, named: the repair reads past them, as the client does. */
function skippedNote(
  skipped: readonly number[],
  count: number | undefined,
  client: string,
): string[] {
  if (skipped.length === 0) return [];
  const total = count ?? skipped.length;
  const shownLines = skipped.slice(0, 10).join(', ');
  const more = total > 10 ? ` and ${total - 10} more` : '';
  return [
    `  note: line${total === 1 ? '' : 's'} ${shownLines}${more} ${total === 1 ? 'is' : 'are'} not JSON: skipped, as ${client} skips ${total === 1 ? 'it' : 'them'}; a result written there cannot be seen`,
  ];
}

function scanText(
  outcomes: readonly RepairOutcome[],
  scanned: number,
  io: CommandIo,
  cut: string | undefined,
): string {
  const cwd = io.cwd;
  const broken = outcomes.filter((outcome) => outcome.status === 'planned');
  const lines: string[] = [];
  for (const outcome of outcomes) {
    const format =
      outcome.status === 'refused' && outcome.detection === undefined
        ? '?'
        : `${outcome.detection?.format} ${outcome.detection?.version}`;
    lines.push(
      `${terminalSafe(scanState(outcome)).padEnd(28)} ${terminalSafe(format).padEnd(22)} ${terminalSafe(shown(outcome.path, cwd))}`,
    );
    const why = scanWhy(outcome);
    if (why !== null) lines.push(`  ${terminalSafe(why)}`);
  }
  lines.push('');
  if (cut !== undefined) lines.push(`The scan stopped early: ${cut}.`);
  lines.push(
    `${outcomes.length} session${outcomes.length === 1 ? '' : 's'} of ${scanned} file${scanned === 1 ? '' : 's'}: ${broken.length} broken.`,
  );
  // The broken sessions by name, so the hint runs as printed (--dry-run: look before writing).
  if (broken.length > 0) {
    const files = broken.map((outcome) => quote(shown(outcome.path, cwd))).join(' ');
    lines.push(`Next: ${hintCommand(io, `repair --dry-run ${files}`)}`);
  }
  return `${lines.join('\n')}\n`;
}

function scanState(outcome: RepairOutcome): string {
  switch (outcome.status) {
    case 'planned':
      return `broken: ${outcome.calls.length} call${outcome.calls.length === 1 ? '' : 's'} unanswered`;
    case 'refused':
      return `refused (${outcome.reason})`;
    case 'resumed':
      return 'resumed unrepaired';
    default:
      return 'ok';
  }
}

/** The reason under a scan's line, for what is not plainly ok or broken. */
function scanWhy(outcome: RepairOutcome): string | null {
  if (outcome.status === 'refused') {
    // The detail starts with the path, already on the line above.
    const prefix = `${outcome.path}: `;
    return outcome.detail.startsWith(prefix) ? outcome.detail.slice(prefix.length) : outcome.detail;
  }
  if (outcome.status === 'resumed') return `${outcome.told}; ${outcome.detail}`;
  if (outcome.status === 'planned' && outcome.forced !== undefined) return outcome.forced;
  return null;
}

function shown(path: string, cwd: string): string {
  const near = relative(cwd, path);
  return near.startsWith('..') ? path : near;
}

/** How deep below a root a scan looks: session folders are a few levels deep. */
const MAX_DEPTH = 12;
/** How many folder entries a scan reads at most, so that a huge tree cannot hold it. */
const MAX_ENTRIES = 200_000;

/**
 * The `*.jsonl` files below `folders`, sorted per folder. Never follows a symbolic link below a
 * root (a link to a folder may loop or lead out of the roots; a linked file is another file's
 * name), and bounded: MAX_SCANNED files, MAX_ENTRIES entries, MAX_DEPTH levels — a scan cut
 * short says why (`cut`). A root that is missing is skipped (the default roots of a client the
 * user does not have).
 */
async function sessionFiles(
  folders: readonly string[],
): Promise<{ files: string[]; cut?: string }> {
  const files: string[] = [];
  let entries = 0;
  const walk = async (folder: string, depth: number): Promise<string | undefined> => {
    let listed: Dirent[];
    try {
      listed = await readdir(folder, { withFileTypes: true, encoding: 'utf8' });
    } catch {
      return undefined;
    }
    listed.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    for (const entry of listed) {
      entries += 1;
      if (entries > MAX_ENTRIES) return `more than ${MAX_ENTRIES} entries`;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (depth >= MAX_DEPTH) continue;
        const cut = await walk(path, depth + 1);
        if (cut !== undefined) return cut;
      } else if (
        entry.isFile() &&
        (entry.name.endsWith('.jsonl') || entry.name === 'opencode.db')
      ) {
        files.push(path);
        if (files.length >= MAX_SCANNED) return `${MAX_SCANNED} files`;
      }
    }
    return undefined;
  };
  for (const folder of folders) {
    const cut = await walk(folder, 0);
    if (cut !== undefined) return { files, cut };
  }
  return { files };
}
