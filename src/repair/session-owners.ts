import { basename } from 'node:path';
import type { ProcessEntry, ProcessTable } from './process-table.ts';

/**
 * A client program as it shows in the process table: the names of its npm bins and native
 * executables, and the npm packages whose scripts run it under node.
 *
 * @example
 * const pi: ClientProgram = { client: 'pi', formats: ['pi'], names: ['pi'],
 *   packages: ['@mariozechner/pi-coding-agent'] };
 */
export interface ClientProgram {
  client: string;
  /** The session formats (`ForeignFormatName`s) this client writes. */
  formats: readonly string[];
  names: readonly string[];
  packages: readonly string[];
}

/**
 * The clients whose sessions `repair` knows, as they run: Claude Code is a native `claude`
 * (`claude.exe` in its npm package); Codex and opencode are node scripts that start a native
 * binary of the same name; pi and Gemini CLI run as node scripts.
 *
 * @example
 * const names = CLIENT_PROGRAMS.map((program) => program.client);
 */
export const CLIENT_PROGRAMS: readonly ClientProgram[] = [
  {
    client: 'claude',
    formats: ['claude-code'],
    names: ['claude', 'claude.exe'],
    packages: ['@anthropic-ai/claude-code'],
  },
  {
    client: 'codex',
    formats: ['codex'],
    names: ['codex', 'codex.js'],
    packages: ['@openai/codex'],
  },
  { client: 'pi', formats: ['pi'], names: ['pi'], packages: ['@mariozechner/pi-coding-agent'] },
  {
    client: 'opencode',
    formats: ['opencode'],
    names: ['opencode', 'opencode.exe'],
    packages: ['opencode-ai'],
  },
  {
    client: 'gemini',
    formats: ['gemini', 'gemini-cli'],
    names: ['gemini'],
    packages: ['@google/gemini-cli'],
  },
];

/**
 * What liveness knows of a session: its file, its format, and what the file says of the
 * session's id and working folder (each optional: not every format records both).
 *
 * @example
 * const session: OwnedSession = { path: '/h/.pi/agent/sessions/--w--/s.jsonl', format: 'pi',
 *   id: '0f1e…', cwds: ['/work/app'], folder: '/h/.pi/agent/sessions/--w--' };
 */
export interface OwnedSession {
  path: string;
  format: string;
  id?: string;
  /** The session's recorded working folder, as written and as resolved (links followed). */
  cwds: readonly string[];
  /** The folder (or database) whose open descriptors tie a client to the session. */
  folder: string;
  /** The file's device and inode: a descriptor on it is an open file, whatever its name. */
  file?: { dev: number; ino: number };
}

/**
 * A process that may be writing the session, and why it is taken for its owner.
 *
 * @example
 * const owner: SessionOwner = { pid: 4242, program: 'pi', matched: 'its working folder is the session\'s (/work/app)' };
 */
export interface SessionOwner {
  pid: number;
  /** The client it is (`claude`, `pi`, …), or the command of a process that has the file open. */
  program: string;
  /** What tied it to the session. */
  matched: string;
}

/** Session ids shorter than this are not looked for on command lines (too easy to match by chance). */
const MIN_ID_LENGTH = 8;

/**
 * The client a process is, by its executable, its kernel name, its `argv[0]`, or — under node,
 * bun or deno — the script it runs: a bin name (`claude`, `pi`, …) or a path inside the
 * client's npm package. Null for any other process. Pure.
 *
 * @example
 * clientOf({ pid: 1, command: 'node', executable: '/usr/bin/node', argv: ['node', '/x/bin/pi'],
 *   cwd: '/', descriptors: [] })?.client; // 'pi'
 */
export function clientOf(entry: ProcessEntry): ClientProgram | null {
  const candidates = [entry.command, entry.executable ?? '', entry.argv[0] ?? ''];
  if (/^(node|nodejs|bun|deno)$/.test(basename(entry.argv[0] ?? ''))) {
    const script = entry.argv.slice(1).find((part) => !part.startsWith('-'));
    if (script !== undefined) candidates.push(script);
  }
  for (const program of CLIENT_PROGRAMS) {
    for (const candidate of candidates) {
      if (candidate === '') continue;
      if (program.names.includes(basename(candidate))) return program;
      if (program.packages.some((name) => candidate.includes(`/node_modules/${name}/`))) {
        return program;
      }
    }
  }
  return null;
}

/**
 * The processes that may own `session`: any process with the file open; and any process of the
 * session's client (of any known client when the format is none of theirs) whose command line
 * names the session's id, whose working folder is the session's, or that holds a descriptor in
 * the session's folder. Pure: the table is read elsewhere (`readProcessTable`).
 *
 * @example
 * const owners = sessionOwners(await readProcessTable(), session);
 * for (const owner of owners) console.log(`pid ${owner.pid} (${owner.program}): ${owner.matched}`);
 */
export function sessionOwners(table: ProcessTable, session: OwnedSession): SessionOwner[] {
  const known = CLIENT_PROGRAMS.some((program) => program.formats.includes(session.format));
  const owners: SessionOwner[] = [];
  for (const entry of table.processes) {
    const opened = openFile(entry, session);
    if (opened !== null) {
      const program = clientOf(entry)?.client ?? (basename(entry.argv[0] ?? '') || entry.command);
      owners.push({ pid: entry.pid, program, matched: opened });
      continue;
    }
    const program = clientOf(entry);
    if (program === null || (known && !program.formats.includes(session.format))) continue;
    const matched = clientMatch(entry, session);
    if (matched !== null) owners.push({ pid: entry.pid, program: program.client, matched });
  }
  return owners;
}

function openFile(entry: ProcessEntry, session: OwnedSession): string | null {
  const file = session.file;
  for (const descriptor of entry.descriptors) {
    if (
      descriptor.target === session.path ||
      (file !== undefined && descriptor.dev === file.dev && descriptor.ino === file.ino)
    ) {
      return 'it has the session file open';
    }
  }
  return null;
}

function clientMatch(entry: ProcessEntry, session: OwnedSession): string | null {
  const id = session.id;
  if (
    id !== undefined &&
    id.length >= MIN_ID_LENGTH &&
    entry.argv.some((part) => part.includes(id))
  ) {
    return `its command line names the session's id (${id})`;
  }
  if (entry.cwd !== null && session.cwds.includes(entry.cwd)) {
    return `its working folder is the session's (${entry.cwd})`;
  }
  const folder = session.folder.endsWith('/') ? session.folder : `${session.folder}/`;
  const inFolder = entry.descriptors.find(
    (descriptor) => descriptor.target.startsWith(folder) || descriptor.target === session.folder,
  );
  if (inFolder !== undefined) return `it has ${inFolder.target} open, in the session's folder`;
  return null;
}
