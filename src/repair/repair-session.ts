import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type FileSystem, nodeFileSystem, sameFile } from '../transcript/file-system.ts';
import { describeError } from '../transcript/session-error.ts';
import type {
  ForeignFormat,
  ForeignLine,
  FormatDetection,
  RepairPlan,
  UnansweredCall,
} from './foreign-format.ts';
import { FOREIGN_FORMATS } from './foreign-formats.ts';
import { openElsewhere } from './open-elsewhere.ts';
import { sessionLines } from './session-lines.ts';

/**
 * What {@link repairSession} is asked.
 *
 * @example
 * const options: RepairOptions = { dryRun: true };
 */
export interface RepairOptions {
  /** Plan only: read, decide, report the lines that would be appended; write nothing. */
  dryRun?: boolean;
  /**
   * Repair even though the file looks live (another process has it open, or it changed within
   * {@link RepairOptions.quietMs}). The owning client, if it is still running, may append after
   * us; the repair is still append-only and backed up.
   */
  force?: boolean;
  /** How long a file must have been left alone to count as not being written (default 5 s). */
  quietMs?: number;
  /** Files larger than this are refused unread (default 256 MiB): a repair holds the file whole. */
  maxBytes?: number;
  fileSystem?: FileSystem;
  clock?: () => Date;
  randomBytes?: (count: number) => Uint8Array;
  /** The formats to recognise (default: Claude Code, Codex, pi). */
  formats?: readonly ForeignFormat[];
}

/**
 * Why a session was not repaired.
 *
 * @example
 * if (outcome.status === 'refused' && outcome.reason === 'live') console.log('still running?');
 */
export type RepairRefusal =
  | 'missing'
  | 'not-a-file'
  | 'too-large'
  | 'unknown-format'
  | 'unsupported-version'
  | 'live'
  | 'shape'
  | 'io-error';

/**
 * What {@link repairSession} did with one file.
 *
 * - `repaired`: `calls` were answered by the appended lines; `backup` holds the bytes before.
 * - `planned`: a dry run; `append` are the lines a repair would append.
 * - `clean`: nothing needed (`detail` says why); nothing written.
 * - `refused`: nothing written; `detail` says why, naming the file.
 *
 * @example
 * const outcome = await repairSession('session.jsonl');
 * if (outcome.status === 'repaired') console.log(`answered ${outcome.calls.length} calls`);
 */
export type RepairOutcome =
  | {
      path: string;
      status: 'repaired';
      detection: FormatDetection;
      calls: UnansweredCall[];
      appended: number;
      backup: string;
      /** Where a torn last line was copied, when there was one. */
      sidecar?: string;
      /** Lines that are not JSON, skipped as the client skips them (numbers from 1). */
      skipped: number[];
    }
  | {
      path: string;
      status: 'planned';
      detection: FormatDetection;
      calls: UnansweredCall[];
      append: string[];
      /** Bytes of a torn last line that a repair would copy to a sidecar and leave in place. */
      tornBytes: number;
      /** Lines that are not JSON, skipped as the client skips them (numbers from 1). */
      skipped: number[];
    }
  | {
      path: string;
      status: 'clean';
      detection: FormatDetection;
      detail: string;
      /** Bytes of a torn last line, not read (a call it held cannot be seen). */
      tornBytes: number;
      /** Lines that are not JSON, skipped as the client skips them (numbers from 1). */
      skipped: number[];
    }
  | {
      path: string;
      status: 'refused';
      reason: RepairRefusal;
      detail: string;
      detection?: FormatDetection;
    };

/** A file read whole, split on `\n` only; a last line without its newline is torn, not data. */
interface ReadSession {
  bytes: Buffer;
  lines: ForeignLine[];
  /** Offset where a torn last line starts (not data), or null when there is none. */
  tornAt: number | null;
  /** True when the last line is a whole record without its newline (read as data). */
  unterminated: boolean;
}

/**
 * Repair another agent's session that a crash cut off mid-tool, honestly: every tool call
 * without a result is answered in the client's own result shape, marked as an error, with the
 * text revival uses (the outcome is unknown, it was NOT retried, check before assuming). The
 * repair only appends: the original bytes stay a prefix of the file, and a byte-exact backup
 * (`<file>.bak-<time>`, created exclusively) is written and synced before the first write. A
 * torn last line is copied to a sidecar and never parsed; a newline is appended first so that
 * nothing new is glued onto it (the clients skip a line they cannot parse).
 *
 * Refuses, writing nothing: an unknown format or an untested version (never guessing), a file
 * that looks live (another process has it open, or it changed in the last few seconds) unless
 * `force`, a file that changed while it was read. A session that needs nothing is `clean`, and
 * a second repair of a repaired session is too. Never throws: failures are outcomes.
 *
 * @example
 * const outcome = await repairSession('~/.pi/agent/sessions/--home-me--/s.jsonl', { dryRun: true });
 * if (outcome.status === 'planned') for (const line of outcome.append) console.log(line);
 */
export async function repairSession(
  path: string,
  options: RepairOptions = {},
): Promise<RepairOutcome> {
  const fileSystem = options.fileSystem ?? nodeFileSystem;
  const clock = options.clock ?? (() => new Date());
  const refused = (reason: RepairRefusal, detail: string, detection?: FormatDetection) =>
    detection === undefined
      ? ({ path, status: 'refused', reason, detail: `${path}: ${detail}` } as const)
      : ({ path, status: 'refused', reason, detail: `${path}: ${detail}`, detection } as const);
  try {
    const before = await fileSystem.identityOf(path);
    if (before === null) return refused('missing', 'no such file');
    if (before.kind !== 'file') return refused('not-a-file', `not a regular file (${before.kind})`);
    const read = await readSession(fileSystem, path, options.maxBytes ?? 256 * 1024 * 1024);
    if (typeof read === 'string') return refused('too-large', read);
    const formats = options.formats ?? FOREIGN_FORMATS;
    let format: ForeignFormat | undefined;
    let detection: FormatDetection | null = null;
    for (const candidate of formats) {
      detection = candidate.detect(read.lines);
      if (detection !== null) {
        format = candidate;
        break;
      }
    }
    if (format === undefined || detection === null) {
      return refused(
        'unknown-format',
        `${unrecognised(read)}not a session of ${formats.map((known) => known.name).join(', ')} that this version recognises`,
      );
    }
    if (!detection.supported) {
      return refused(
        'unsupported-version',
        `${detection.format} ${detection.version}: ${detection.reason ?? 'not a tested version'}`,
        detection,
      );
    }
    const plan: RepairPlan = format.plan(read.lines, {
      now: clock(),
      randomBytes: options.randomBytes ?? ((count) => cryptoRandomBytes(count)),
    });
    if (plan.kind === 'refuse') return refused('shape', plan.detail, detection);
    const tornBytes = read.tornAt === null ? 0 : read.bytes.length - read.tornAt;
    const skipped = read.lines
      .filter((line) => line.value === undefined && line.text.trim() !== '')
      .map((line) => line.number);
    if (plan.kind === 'clean') {
      return { path, status: 'clean', detection, detail: plan.detail, tornBytes, skipped };
    }
    if (options.dryRun === true) {
      return {
        path,
        status: 'planned',
        detection,
        calls: plan.calls,
        append: plan.append,
        tornBytes,
        skipped,
      };
    }
    if (options.force !== true) {
      const live = await liveness(path, options.quietMs ?? 5000, clock());
      if (live !== null) return refused('live', `${live}; --force repairs it anyway`, detection);
    }
    const committed = await commit(fileSystem, path, read, plan, detection, clock());
    return committed.status === 'repaired' ? { ...committed, skipped } : committed;
  } catch (error) {
    return refused('io-error', describeError(error));
  }
}

/**
 * What is wrong at the start of a file no format recognised, when something plainly is: the
 * formats recognise a session by its first lines.
 */
function unrecognised(read: ReadSession): string {
  const first = read.lines[0];
  if (first === undefined) {
    return read.tornAt === null
      ? 'the file is empty; '
      : `it holds only a torn line of ${read.bytes.length - read.tornAt} bytes; `;
  }
  if (first.text.startsWith('\ufeff')) return 'line 1 starts with a byte order mark; ';
  if (first.value === undefined) return 'line 1 is not JSON; ';
  return '';
}

/** Read the whole file (bounded), split on `\n` only, keeping a torn last line out of the data. */
async function readSession(
  fileSystem: FileSystem,
  path: string,
  maxBytes: number,
): Promise<ReadSession | string> {
  const fd = await fileSystem.open(path, 'read');
  try {
    const size = await fileSystem.size(fd);
    if (size > maxBytes) return `${size} bytes, over the ${maxBytes}-byte limit of repair`;
    const bytes = Buffer.alloc(size);
    let filled = 0;
    while (filled < size) {
      const got = await fileSystem.read(fd, bytes.subarray(filled), filled);
      if (got === 0) break;
      filled += got;
    }
    const data = bytes.subarray(0, filled);
    return { bytes: data, ...sessionLines(data) };
  } finally {
    await fileSystem.close(fd).catch(() => undefined);
  }
}

/** Why the file looks as if its client is still writing it, or null. */
async function liveness(path: string, quietMs: number, now: Date): Promise<string | null> {
  const { holders, complete } = await openElsewhere(path);
  if (holders.length > 0) {
    return `open in another process (${holders.map((holder) => `pid ${holder.pid} ${holder.command}`).join(', ')})`;
  }
  if (!complete) {
    return 'not every process could be checked for it within 3 s (too many processes): its client may still have it open';
  }
  const changed = (await lstat(path)).mtimeMs;
  const age = now.getTime() - changed;
  if (age < quietMs) {
    return `changed ${Math.max(0, Math.round(age))} ms ago: its client may still be writing it`;
  }
  return null;
}

/** Back up, keep the torn bytes, append; everything synced. */
async function commit(
  fileSystem: FileSystem,
  path: string,
  read: ReadSession,
  plan: Extract<RepairPlan, { kind: 'repair' }>,
  detection: FormatDetection,
  now: Date,
): Promise<RepairOutcome> {
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const backup = `${path}.bak-${stamp}`;
  let sidecar: string | undefined;
  const changed = (why: string): RepairOutcome => ({
    path,
    status: 'refused',
    reason: 'live',
    detail: `${path}: ${why}; nothing written`,
    detection,
  });
  const fd = await fileSystem.open(path, 'append');
  try {
    // One repair at a time: a second one waits for nothing and refuses, so no call is answered
    // twice. The clients take no lock; the byte comparison below is what guards against them.
    if (!fileSystem.tryLock(fd)) return changed('another repair of this file is running');
    const opened = await fileSystem.identity(fd);
    const atPath = await fileSystem.identityOf(path);
    if (opened.kind !== 'file' || atPath === null || !sameFile(opened, atPath)) {
      return changed('the file was replaced after it was read');
    }
    // The plan was made from `read.bytes`: append only to exactly those bytes.
    const current = Buffer.alloc(read.bytes.length + 1);
    let filled = 0;
    for (;;) {
      const got = await fileSystem.read(fd, current.subarray(filled), filled);
      if (got === 0 || filled + got >= current.length) {
        filled += got;
        break;
      }
      filled += got;
    }
    if (filled !== read.bytes.length || !current.subarray(0, filled).equals(read.bytes)) {
      return changed('the file changed after it was read (its client may be writing it)');
    }
    await writeNewFile(fileSystem, backup, read.bytes);
    if (read.tornAt !== null) {
      sidecar = `${path}.torn-${read.tornAt}`;
      await writeNewFile(fileSystem, sidecar, read.bytes.subarray(read.tornAt));
    }
    await fileSystem.syncFolder(dirname(path));
    const newlineFirst = read.tornAt !== null || read.unterminated;
    const text = `${newlineFirst ? '\n' : ''}${plan.append.map((line) => `${line}\n`).join('')}`;
    await writeAll(fileSystem, fd, Buffer.from(text, 'utf8'));
    await fileSystem.sync(fd);
  } finally {
    await fileSystem.close(fd).catch(() => undefined);
  }
  const outcome: RepairOutcome = {
    path,
    status: 'repaired',
    detection,
    calls: plan.calls,
    appended: plan.append.length,
    backup,
    skipped: [],
  };
  if (sidecar !== undefined) outcome.sidecar = sidecar;
  return outcome;
}

/**
 * Create `path` exclusively (never through a link) with `bytes`, synced. One already there with
 * exactly these bytes is kept (an earlier repair stopped after writing it); any other is an error.
 */
async function writeNewFile(fileSystem: FileSystem, path: string, bytes: Buffer): Promise<void> {
  let fd: number;
  try {
    fd = await fileSystem.open(path, 'create');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Never accept what a link there points to as the backup: only a regular file of ours.
    const there = await fileSystem.identityOf(path);
    if (there?.kind !== 'file') throw new Error(`${path} exists and is not a regular file`);
    const existing = await readSession(fileSystem, path, bytes.length);
    if (typeof existing !== 'string' && existing.bytes.equals(bytes)) return;
    throw new Error(`${path} exists and holds other bytes; move it away to repair`);
  }
  try {
    await writeAll(fileSystem, fd, bytes);
    await fileSystem.sync(fd);
  } finally {
    await fileSystem.close(fd).catch(() => undefined);
  }
}

async function writeAll(fileSystem: FileSystem, fd: number, bytes: Buffer): Promise<void> {
  for (let written = 0; written < bytes.length; ) {
    const count = await fileSystem.write(fd, bytes.subarray(written));
    if (count <= 0) throw new Error(`a write of ${bytes.length - written} bytes wrote nothing`);
    written += count;
  }
}
