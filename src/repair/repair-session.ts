import { createHash, randomBytes as cryptoRandomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { constants, readSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type FileSystem, nodeFileSystem, sameFile } from '../transcript/file-system.ts';
import { describeError } from '../transcript/transcript-error.ts';
import type {
  ForeignFormat,
  ForeignLine,
  FormatDetection,
  RepairPlan,
  UnansweredCall,
} from './foreign-format.ts';
import { FOREIGN_FORMATS } from './foreign-formats.ts';
import type { ProcessTable } from './process-table.ts';
import { sessionLiveness } from './session-liveness.ts';
import { StreamedLines, sessionTail } from './streamed-lines.ts';
import { unseenShape } from './unseen-shape.ts';

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
   * Repair even though the session looks live (a process of its client is tied to it, another
   * process has it open, or it changed within {@link RepairOptions.quietMs}). The owning
   * client, if it is still running, may write the real result after ours; the outcome says so
   * (`forced`). The repair is still append-only and backed up.
   */
  force?: boolean;
  /**
   * Repair a session written by a client release newer than every release tested (refused
   * otherwise, naming both), but only when every line it reads and writes is of a shape the
   * real-client tests have seen (`SEEN_SHAPES`); a line of another shape is refused (`shape`).
   */
  allowNewer?: boolean;
  /** How long a file must have been left alone to count as not being written (default 5 s). */
  quietMs?: number;
  /**
   * Files larger than this are refused unread (default 256 MiB), a bound on the time a repair
   * takes: its memory does not grow with the file (the file is read in chunks, again for each
   * pass, and never held; see docs/repair.md "Memory").
   */
  maxBytes?: number;
  /**
   * How the session is opened, checked and appended to. Its descriptors must be real ones:
   * the plan reads the session through its read descriptor with `readSync`, chunk by chunk.
   */
  fileSystem?: FileSystem;
  clock?: () => Date;
  randomBytes?: (count: number) => Uint8Array;
  /** The formats to recognise (default: Claude Code, Codex, pi). */
  formats?: readonly ForeignFormat[];
  /** Where the processes are read from (default `/proc`; a scan reads them once for all files). */
  processTable?: () => Promise<ProcessTable>;
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
  | 'mixed-format'
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
 * - `resumed`: the client resumed the session after the cut-off `calls` without a repair, and
 *   `told` the model what it says; results appended now would not follow the calls. Nothing
 *   written.
 * - `refused`: nothing written; `detail` says why, naming the file.
 *
 * `forced` (repaired, planned) says what `--force` overrode and risks; `interleaved`
 * (repaired) says that another process wrote between the repair's last check and its answer.
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
      /** How many lines were skipped (`skipped` names the first {@link SKIPPED_NAMED}). */
      skippedCount?: number;
      forced?: string;
      interleaved?: string;
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
      /** How many lines were skipped (`skipped` names the first {@link SKIPPED_NAMED}). */
      skippedCount?: number;
      forced?: string;
    }
  | {
      path: string;
      status: 'resumed';
      detection: FormatDetection;
      calls: UnansweredCall[];
      /** What the model was told of the calls: `"aborted"`, `"No result provided"`, nothing. */
      told: string;
      detail: string;
      skipped: number[];
      /** How many lines were skipped (`skipped` names the first {@link SKIPPED_NAMED}). */
      skippedCount?: number;
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
      /** How many lines were skipped (`skipped` names the first {@link SKIPPED_NAMED}). */
      skippedCount?: number;
    }
  | {
      path: string;
      status: 'refused';
      reason: RepairRefusal;
      detail: string;
      detection?: FormatDetection;
    };

/**
 * A session as the plan reads it: its lines streamed from the file (never held), where its
 * data ends, and what the commit checks the file against instead of its bytes.
 */
interface ReadSession {
  lines: StreamedLines;
  size: number;
  /** Offset where a torn last line starts (not data), or null when there is none. */
  tornAt: number | null;
  /** The SHA-256 of the torn last line's bytes (what its sidecar must hold). */
  tornDigest?: string;
  /** True when the last line is a whole record without its newline (read as data). */
  unterminated: boolean;
}

/** The bytes a repair planned from: the first `size` bytes of the file, by their SHA-256. */
interface Planned {
  size: number;
  digest: string;
}

/**
 * How many skipped line numbers an outcome names (`skippedCount` says how many there were):
 * a file of a million lines that are not JSON is not answered with a million numbers.
 *
 * @example
 * const named = outcome.status === 'clean' ? outcome.skipped.length : 0; // at most SKIPPED_NAMED
 */
export const SKIPPED_NAMED = 1000;

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
  try {
    const before = await fileSystem.identityOf(path);
    if (before === null) return refusal(path, 'missing', 'no such file');
    if (before.kind !== 'file') {
      return refusal(path, 'not-a-file', `not a regular file (${before.kind})`);
    }
    // The plan reads through this descriptor only; it is closed before anything is written.
    const fd = await fileSystem.open(path, 'read');
    let planned: PlannedRepair | RepairOutcome;
    let read: ReadSession | string;
    try {
      read = await readSession(fileSystem, fd, options.maxBytes ?? 256 * 1024 * 1024);
      if (typeof read === 'string') return refusal(path, 'too-large', read);
      planned = planSession(path, read, options);
    } finally {
      await fileSystem.close(fd).catch(() => undefined);
    }
    if ('status' in planned) return planned;
    return await decide(path, read, planned, options);
  } catch (error) {
    return refusal(path, 'io-error', describeError(error));
  }
}

/** What the plan found, ready for {@link decide}. */
interface PlannedRepair {
  plan: RepairPlan;
  detection: FormatDetection;
  planned: Planned;
  skipped: number[];
  skippedCount: number;
}

/**
 * Detect, plan and check the shapes, every pass streamed from the file; then one more pass
 * naming the lines that are not JSON. Refused when the passes did not all read the same bytes.
 */
function planSession(
  path: string,
  read: ReadSession,
  options: RepairOptions,
): PlannedRepair | RepairOutcome {
  const changed = (): RepairOutcome =>
    refusal(
      path,
      'live',
      `the file changed while it was read (its client may be writing it); nothing written. ${LIVE_ADVICE}`,
    );
  const detected = detectFormat(path, read, options.formats ?? FOREIGN_FORMATS, options);
  if (read.lines.changed) return changed();
  if ('status' in detected) return detected;
  const { format, detection } = detected;
  const plan: RepairPlan = format.plan(read.lines, {
    now: (options.clock ?? (() => new Date()))(),
    randomBytes: options.randomBytes ?? ((count) => cryptoRandomBytes(count)),
  });
  if (read.lines.changed) return changed();
  if (detection.newerThan !== undefined) {
    const unseen = unseenShape(
      detection.format,
      read.lines,
      plan.kind === 'repair' ? plan.append : [],
    );
    if (read.lines.changed) return changed();
    if (unseen !== null) return refusal(path, 'shape', `--allow-newer: ${unseen}`, detection);
  }
  const skipped: number[] = [];
  let skippedCount = 0;
  for (const line of read.lines) {
    if (line.value !== undefined || line.text.trim() === '') continue;
    skippedCount += 1;
    if (skipped.length < SKIPPED_NAMED) skipped.push(line.number);
  }
  const digest = read.lines.settle();
  if (digest === null) return changed();
  return { plan, detection, planned: { size: read.size, digest }, skipped, skippedCount };
}

/** A refusal naming the file. */
function refusal(
  path: string,
  reason: RepairRefusal,
  detail: string,
  detection?: FormatDetection,
): RepairOutcome {
  return detection === undefined
    ? { path, status: 'refused', reason, detail: `${path}: ${detail}` }
    : { path, status: 'refused', reason, detail: `${path}: ${detail}`, detection };
}

/**
 * The one format whose file this is, decided by the file's own header and consistency: a file
 * two formats both recognise (a pi or Codex session holding a line in Claude Code's envelope)
 * is refused, naming both — repairing it as either would answer the wrong call.
 */
function detectFormat(
  path: string,
  read: ReadSession,
  formats: readonly ForeignFormat[],
  options: RepairOptions,
): { format: ForeignFormat; detection: FormatDetection } | RepairOutcome {
  const found: { format: ForeignFormat; detection: FormatDetection }[] = [];
  for (const format of formats) {
    const detection = format.detect(read.lines);
    if (detection !== null) found.push({ format, detection });
  }
  const [first, second] = found;
  if (first === undefined) {
    return refusal(
      path,
      'unknown-format',
      `${unrecognised(read)}not a session of ${formats.map((known) => known.name).join(', ')} that this version recognises`,
    );
  }
  if (second !== undefined) {
    return refusal(
      path,
      'mixed-format',
      `its lines read both as a ${found.map((each) => `${each.detection.format} ${each.detection.version}`).join(' and as a ')} session; a file of one client holding another's lines is not repaired (the repair would answer the wrong call)`,
    );
  }
  const newest = first.detection.newerThan;
  if (newest !== undefined && options.allowNewer === true) {
    const reason = `newer than ${newest}, the newest release tested; repaired because of --allow-newer, every line it reads and writes being of a shape the tests have seen`;
    return { format: first.format, detection: { ...first.detection, supported: true, reason } };
  }
  if (!first.detection.supported) {
    return refusal(
      path,
      'unsupported-version',
      `${first.detection.format} ${first.detection.version}: ${first.detection.reason ?? 'not a tested version'}`,
      first.detection,
    );
  }
  return first;
}

/** From a plan to an outcome: liveness first (the same verdict for a dry run), then the write. */
async function decide(
  path: string,
  read: ReadSession,
  planned: PlannedRepair,
  options: RepairOptions,
): Promise<RepairOutcome> {
  const clock = options.clock ?? (() => new Date());
  const { plan, detection, skipped, skippedCount } = planned;
  if (plan.kind === 'refuse') return refusal(path, 'shape', plan.detail, detection);
  const tornBytes = read.tornAt === null ? 0 : read.size - read.tornAt;
  const counted = skippedCount > skipped.length ? { skippedCount } : {};
  if (plan.kind === 'clean') {
    const detail = plan.detail;
    return { path, status: 'clean', detection, detail, tornBytes, skipped, ...counted };
  }
  if (plan.kind === 'resumed') {
    const { calls, told, detail } = plan;
    return { path, status: 'resumed', detection, calls, told, detail, skipped, ...counted };
  }
  const facts = { format: detection.format, ...detection.session };
  // Gemini CLI records no working folder in a session and keeps nothing open: the folder it
  // runs in is in its project folder's .project_root (~/.gemini/tmp/<project>/.project_root).
  if (detection.format === 'gemini-cli' && facts.cwd === undefined) {
    const root = await geminiProjectRoot(path);
    if (root !== undefined) facts.cwd = root;
  }
  const verdict = await sessionLiveness(path, facts, {
    quietMs: options.quietMs ?? 5000,
    now: clock(),
    ...(options.processTable === undefined ? {} : { processTable: options.processTable }),
  });
  let forced: string | undefined;
  if (verdict.live) {
    if (options.force !== true) {
      return refusal(path, 'live', `${verdict.reason}. ${LIVE_ADVICE}`, detection);
    }
    forced = `${verdict.reason}. ${FORCE_RISK}`;
  }
  if (options.dryRun === true) {
    const { calls, append } = plan;
    const outcome: RepairOutcome = {
      path,
      status: 'planned',
      detection,
      calls,
      append,
      tornBytes,
      skipped,
      ...counted,
    };
    return forced === undefined ? outcome : { ...outcome, forced };
  }
  const committed = await commit(
    options.fileSystem ?? nodeFileSystem,
    path,
    { read, plan, planned: planned.planned, detection },
    clock(),
  );
  if (committed.status !== 'repaired') return committed;
  const told = { ...committed, skipped, ...counted };
  return forced === undefined ? told : { ...told, forced };
}

/** What a refusal as live tells the user to do first. */
const LIVE_ADVICE =
  'First stop that client (or wait for its tool to finish) and try again; --force repairs it anyway';

/** What a forced repair of a live-looking session risks. */
const FORCE_RISK =
  'Repaired anyway (--force): if its client is still running, the real result may be written after ours, and the model be told on resume that a call which completed was interrupted';

/**
 * What is wrong at the start of a file no format recognised, when something plainly is: the
 * formats recognise a session by its first lines.
 */
function unrecognised(read: ReadSession): string {
  let first: ForeignLine | undefined;
  for (const line of read.lines) {
    first = line;
    break;
  }
  if (first === undefined) {
    return read.tornAt === null
      ? 'the file is empty; '
      : `it holds only a torn line of ${read.size - read.tornAt} bytes; `;
  }
  if (first.text.startsWith('\ufeff')) return 'line 1 starts with a byte order mark; ';
  if (first.value === undefined) return 'line 1 is not JSON; ';
  return '';
}

/**
 * The session behind `fd`, to be read in chunks through it (bounded by `maxBytes`): where its
 * data ends (a torn last line kept out), and its lines, streamed again for every pass.
 */
async function readSession(
  fileSystem: FileSystem,
  fd: number,
  maxBytes: number,
): Promise<ReadSession | string> {
  const size = await fileSystem.size(fd);
  if (size > maxBytes) return `${size} bytes, over the ${maxBytes}-byte limit of repair`;
  const readAt = (buffer: Buffer, position: number): number =>
    readSync(fd, buffer, 0, buffer.length, position);
  const tail = sessionTail(readAt, size);
  const lines = new StreamedLines(readAt, size, tail.tornAt ?? size);
  const read: ReadSession = { lines, size, tornAt: tail.tornAt, unterminated: tail.unterminated };
  if (tail.tornDigest !== undefined) read.tornDigest = tail.tornDigest;
  return read;
}

/**
 * Back up, keep the torn bytes, append; everything synced. The check that the file still holds
 * exactly the planned bytes (its size, and the SHA-256 of its bytes, read again in chunks) is
 * made on the descriptor the answer is appended through, after the backup is written (as late
 * as it can be); the backup and the sidecar are copied through that descriptor and must hash
 * to what was planned; after the append, what precedes the answer is read back through it: a
 * line another process wrote in between is reported.
 */
async function commit(
  fileSystem: FileSystem,
  path: string,
  what: {
    read: ReadSession;
    plan: Extract<RepairPlan, { kind: 'repair' }>;
    planned: Planned;
    detection: FormatDetection;
  },
  now: Date,
): Promise<RepairOutcome> {
  const { read, plan, planned, detection } = what;
  const backup = `${path}.bak-${now.toISOString().replace(/[:.]/g, '-')}`;
  const sidecar = read.tornAt === null ? undefined : `${path}.torn-${read.tornAt}`;
  const changed = (why: string): RepairOutcome =>
    refusal(path, 'live', `${why}; nothing written. ${LIVE_ADVICE}`, detection);
  const newlineFirst = read.tornAt !== null || read.unterminated;
  const text = Buffer.from(
    `${newlineFirst ? '\n' : ''}${plan.append.map((line) => `${line}\n`).join('')}`,
    'utf8',
  );
  const created: string[] = [];
  const takeBack = async () => {
    for (const name of created) await fileSystem.unlink(name).catch(() => undefined);
  };
  const fd = await fileSystem.open(path, 'append');
  try {
    // One repair at a time: a second one waits for nothing and refuses, so no call is answered
    // twice. The clients take no lock; the byte comparisons below are what guard against them.
    if (!fileSystem.tryLock(fd)) return changed('another repair of this file is running');
    if (!(await isFileAtPath(fileSystem, fd, path))) {
      return changed('the file was replaced after it was read');
    }
    if (!(await holdsExactly(fileSystem, fd, planned))) {
      return changed('the file changed after it was read (its client may be writing it)');
    }
    const copies: [string, Range][] = [[backup, { start: 0, ...planned }]];
    if (sidecar !== undefined && read.tornAt !== null && read.tornDigest !== undefined) {
      copies.push([sidecar, { start: read.tornAt, size: planned.size, digest: read.tornDigest }]);
    }
    for (const [name, range] of copies) {
      const copied = await copyToNewFile(fileSystem, fd, range, name);
      if (copied === 'created') created.push(name);
      if (copied === 'changed') {
        await takeBack();
        return changed(
          'the file changed while the backup was written (its client may be writing it)',
        );
      }
    }
    await fileSystem.syncFolder(dirname(path));
    // The last look before the append, through the descriptor the append goes through.
    if (!(await holdsExactly(fileSystem, fd, planned))) {
      await takeBack();
      return changed(
        'the file changed while the backup was written (its client may be writing it)',
      );
    }
    await writeAll(fileSystem, fd, text);
    await fileSystem.sync(fd);
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
    const interleaved = await landedAfter(fileSystem, fd, planned, text);
    if (interleaved !== null) outcome.interleaved = interleaved;
    return outcome;
  } finally {
    await fileSystem.close(fd).catch(() => undefined);
  }
}

/** Bytes `start` to `size` of a file, known by their SHA-256. */
interface Range {
  start: number;
  size: number;
  digest: string;
}

async function isFileAtPath(fileSystem: FileSystem, fd: number, path: string): Promise<boolean> {
  const opened = await fileSystem.identity(fd);
  const atPath = await fileSystem.identityOf(path);
  return opened.kind === 'file' && atPath !== null && sameFile(opened, atPath);
}

/** Whether the file behind `fd` holds exactly the planned bytes, no byte different, none more. */
async function holdsExactly(
  fileSystem: FileSystem,
  fd: number,
  planned: Planned,
): Promise<boolean> {
  if ((await fileSystem.size(fd)) !== planned.size) return false;
  return (await digestOf(fileSystem, fd, { start: 0, ...planned })) === planned.digest;
}

/** The bytes of the file behind `fd` at the range's place, read in chunks, through `each`. */
async function readRange(
  fileSystem: FileSystem,
  fd: number,
  range: { start: number; size: number },
  each: (bytes: Buffer) => Promise<void> | void,
): Promise<boolean> {
  const chunk = Buffer.alloc(Math.min(Math.max(range.size - range.start, 1), 1024 * 1024));
  for (let position = range.start; position < range.size; ) {
    const want = Math.min(chunk.length, range.size - position);
    const got = await fileSystem.read(fd, chunk.subarray(0, want), position);
    if (got === 0) return false;
    await each(chunk.subarray(0, got));
    position += got;
  }
  return true;
}

/** The SHA-256 of the range of the file behind `fd`, or null when the file is shorter. */
async function digestOf(
  fileSystem: FileSystem,
  fd: number,
  range: { start: number; size: number },
): Promise<string | null> {
  const hash = createHash('sha256');
  const whole = await readRange(fileSystem, fd, range, (bytes) => {
    hash.update(bytes);
  });
  return whole ? hash.digest('hex') : null;
}

/**
 * After the append: null when the planned bytes are still the file's start and the answer
 * follows them directly; otherwise what came in between, for the user.
 */
async function landedAfter(
  fileSystem: FileSystem,
  fd: number,
  planned: Planned,
  answer: Buffer,
): Promise<string | null> {
  const size = await fileSystem.size(fd);
  if ((await digestOf(fileSystem, fd, { start: 0, size: planned.size })) !== planned.digest) {
    return 'the bytes the repair planned from were changed by another process while it wrote: check the session; the backup holds them as they were';
  }
  const there = Buffer.alloc(answer.length);
  let filled = 0;
  while (filled < there.length) {
    const got = await fileSystem.read(fd, there.subarray(filled), planned.size + filled);
    if (got === 0) break;
    filled += got;
  }
  if (filled === answer.length && there.equals(answer)) {
    if (size === planned.size + answer.length) return null;
    return `another process appended ${size - planned.size - answer.length} bytes after the answer: its client is running`;
  }
  return `another process appended to the file between the repair's last check and its answer: ${size - planned.size - answer.length} bytes now stand before (or among) the appended lines, so the answer may not follow the calls, and the backup lacks those bytes. Check the session before resuming it`;
}

/**
 * Create `path` exclusively (never through a link) holding the range of the file behind
 * `from`, copied in chunks and synced: `created`, or `changed` (removed again) when what was
 * copied is not the planned bytes. One already there with exactly those bytes is kept (`kept`:
 * an earlier repair stopped after writing it); any other is an error.
 */
async function copyToNewFile(
  fileSystem: FileSystem,
  from: number,
  range: Range,
  path: string,
): Promise<'created' | 'kept' | 'changed'> {
  let fd: number;
  try {
    fd = await fileSystem.open(path, 'create');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Never accept what a link there points to as the backup: only a regular file of ours.
    const there = await fileSystem.identityOf(path);
    if (there?.kind !== 'file') throw new Error(`${path} exists and is not a regular file`);
    const existing = await fileSystem.open(path, 'read');
    try {
      const length = range.size - range.start;
      const wanted = { size: length, digest: range.digest };
      if (await holdsExactly(fileSystem, existing, wanted)) return 'kept';
    } finally {
      await fileSystem.close(existing).catch(() => undefined);
    }
    throw new Error(`${path} exists and holds other bytes; move it away to repair`);
  }
  let same = false;
  try {
    const hash = createHash('sha256');
    const whole = await readRange(fileSystem, from, range, async (bytes) => {
      hash.update(bytes);
      await writeAll(fileSystem, fd, bytes);
    });
    same = whole && hash.digest('hex') === range.digest;
    if (same) await fileSystem.sync(fd);
  } finally {
    await fileSystem.close(fd).catch(() => undefined);
    if (!same) await fileSystem.unlink(path).catch(() => undefined);
  }
  return same ? 'created' : 'changed';
}

async function writeAll(fileSystem: FileSystem, fd: number, bytes: Buffer): Promise<void> {
  for (let written = 0; written < bytes.length; ) {
    const count = await fileSystem.write(fd, bytes.subarray(written));
    if (count <= 0) throw new Error(`a write of ${bytes.length - written} bytes wrote nothing`);
    written += count;
  }
}

/**
 * The folder a Gemini CLI session's project runs in, from `.project_root` beside its `chats`
 * folder: read without following a link, at most 4 KiB; undefined when it is not there.
 */
async function geminiProjectRoot(path: string): Promise<string | undefined> {
  const file = join(dirname(dirname(path)), '.project_root');
  try {
    const handle = await open(
      file,
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
    try {
      if (!(await handle.stat()).isFile()) return undefined;
      const buffer = Buffer.alloc(4096);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      const root = buffer.subarray(0, bytesRead).toString('utf8').trim();
      return root.startsWith('/') && !root.includes('\n') ? root : undefined;
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}
