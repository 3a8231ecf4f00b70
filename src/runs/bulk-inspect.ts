/**
 * `inspect` for the thousands of transcripts of a `status`, at a few system calls each. Per
 * transcript: one open, one fstat (its kind, its size, its identity and times, and its inode for
 * the lock table), one read of its last 64 KiB into a buffer used for every transcript, one
 * close; the claim files of its tree looked at once per `status`, not once per transcript. From
 * those bytes the answer is made by the very functions `Revival.inspect` uses
 * (`tailReadOfWindow`, `draftInspection`, `finishInspection`), so it is the same answer, checked
 * as much: every line it uses, and every line before the last checkpoint in the window, by its
 * checksum.
 *
 * Whatever is not the common case — a file that cannot be opened or is not a regular file, an
 * inode the lock table names, a claim file there or that cannot be looked at, a window that
 * does not decide (no checkpoint in the last 64 KiB of a longer file, a file growing while it
 * is read), anything thrown — is answered null, and the caller asks `Revival.inspect`, which
 * reads, probes and names it as always.
 *
 * Nothing is written, no lock is taken; reads block (as `blockingReadFileSystem`'s do: a
 * thread-pool round trip costs more than reading a cached file).
 *
 * @module
 */
import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  openSync,
  readSync,
  statSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { draftInspection, finishInspection } from '../revival/inspection-verdict.ts';
import type { Inspection } from '../revival/inspection.ts';
import { layoutAncestors } from '../revival/tree-root.ts';
import { type TailRead, tailReadOfWindow, WINDOW_BYTES } from '../transcript/read-tail-state.ts';
import { claimPathOf } from '../transcript/tree-claim.ts';
import type { FolderListing } from './find-transcripts.ts';
import { type LockTable, mayBeLocked } from './lock-snapshot.ts';

// Non-blocking: a FIFO is not waited on (and then refused, by the fstat, as not a file).
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * What was read of a transcript, for the status index to keep (status-index.ts): the reads
 * `draftInspection` and `finishInspection` were given, and the file they were read from — its
 * device, inode, size and modification and change times, as one string (`key`).
 *
 * @example
 * const kept: ReadOfFile = { key: fileKey(stats), read, full: null };
 */
export interface ReadOfFile {
  key: string;
  read: TailRead;
  /** The read from byte 0, when the inspection needed it; null when it was not made. */
  full: TailRead | null;
}

/**
 * An answer of a {@link BulkInspector}: the inspection, and what was read to make it when the
 * file had not changed for a while before it was read (a file being written is not kept).
 *
 * @example
 * const answer: BulkAnswer = { inspection };
 */
export interface BulkAnswer {
  inspection: Inspection;
  read?: ReadOfFile;
}

/**
 * Answers `Revival.inspect`'s answer for a transcript, or null when the common case does not
 * hold and `Revival.inspect` must be asked. One per thread: it reuses one buffer.
 *
 * @example
 * const inspect = bulkInspector(3, readLockTable());
 * const inspection = inspect(path)?.inspection ?? (await Revival.inspect({ path, maxRevivals: 3 }));
 */
export type BulkInspector = (path: string) => BulkAnswer | null;

/**
 * {@link BulkInspector} from kept reads only: undefined for a transcript it would have to read.
 *
 * @example
 * const answer = fromKept(path); // undefined: read it
 */
export type KeptInspector = (path: string) => BulkAnswer | null | undefined;

/**
 * Where a {@link BulkInspector} may find what it read of a file before: the reads kept under
 * the file's path and key, or undefined.
 *
 * @example
 * const known: KnownReads = { lookup: (path, key) => index.get(path, key) };
 */
export interface KnownReads {
  lookup(path: string, key: string): ReadOfFile | undefined;
}

/**
 * A file that changed less than this long before it was read is not kept: a later change
 * within the resolution of its times (two seconds on FAT) could leave them as they were.
 */
const SETTLED_NS = 2_000_000_000n;

/**
 * What a {@link BulkInspector} is given: the revival cap to judge runs against; the lock table
 * `status` read when it started (null, where there is none to read: then every answer is
 * null); the folders the walk listed, with the claim files in them (a claim file of a listed
 * folder that the walk did not see is not looked at again); and the reads an earlier `status`
 * kept (`known`: a file whose key is unchanged is not read again).
 *
 * @example
 * const context: BulkContext = { maxRevivals: 3, table: readLockTable() };
 */
export interface BulkContext {
  maxRevivals: number;
  table: LockTable | null;
  listing?: FolderListing | undefined;
  known?: KnownReads | undefined;
}

/**
 * A {@link BulkInspector}.
 *
 * @example
 * const inspect = bulkInspector({ maxRevivals: 3, table: readLockTable() });
 */
export function bulkInspector(context: BulkContext): BulkInspector {
  const { maxRevivals, table, known } = context;
  const window = Buffer.allocUnsafeSlow(WINDOW_BYTES);
  const free = claimProbe(table, context.listing);
  return (path) => {
    if (table === null || !free(path)) return null;
    try {
      if (known !== undefined) {
        const kept = keptAnswer(path, maxRevivals, table, known);
        if (kept !== undefined) return kept;
      }
      return readAnswer(path, maxRevivals, table, window);
    } catch {
      return null;
    }
  };
}

/**
 * A {@link KeptInspector}: the answers a {@link bulkInspector} given `known` makes without
 * reading a transcript.
 *
 * @example
 * const fromKept = keptInspector({ maxRevivals: 3, table: readLockTable() }, index);
 */
export function keptInspector(context: BulkContext, known: KnownReads): KeptInspector {
  const { maxRevivals, table } = context;
  const free = claimProbe(table, context.listing);
  return (path) => {
    if (table === null || !free(path)) return null;
    try {
      return keptAnswer(path, maxRevivals, table, known);
    } catch {
      return null;
    }
  };
}

/**
 * Whether no claim of the trees `path` may be in can be held (by layout, each of its
 * ancestors may be its tree's root): each claim file looked at once.
 */
function claimProbe(
  table: LockTable | null,
  listing: FolderListing | undefined,
): (path: string) => boolean {
  /** Claim file → whether nobody can hold it (it is absent, or its inode holds no lock). */
  const claimFree = new Map<string, boolean>();
  return (path) => {
    if (table === null) return false;
    for (const root of layoutAncestors(path)) {
      const claim = claimPathOf(root);
      let free = claimFree.get(claim);
      if (free === undefined) {
        free = claimIsFree(claim, table, listing);
        claimFree.set(claim, free);
      }
      if (!free) return false;
    }
    return true;
  };
}

/**
 * The answer from the reads kept for `path`, when its key is still theirs; undefined when the
 * file must be read (changed, not kept, or the inspection needs a read that was not kept);
 * null when the common case does not hold.
 */
function keptAnswer(
  path: string,
  maxRevivals: number,
  table: LockTable,
  known: KnownReads,
): BulkAnswer | null | undefined {
  const stats = statSync(path, { bigint: true, throwIfNoEntry: false });
  if (stats === undefined || !stats.isFile()) return null;
  if (mayBeLocked(table, Number(stats.ino))) return null;
  const kept = known.lookup(path, fileKey(stats));
  if (kept === undefined) return undefined;
  const draft = draftInspection(path, maxRevivals, kept.read, null, null);
  if (!('needsFullRead' in draft)) return { inspection: draft };
  if (!draft.needsFullRead) return { inspection: finishInspection(draft, null) };
  if (kept.full === null) return undefined;
  return { inspection: finishInspection(draft, kept.full) };
}

/** The answer from the file's last 64 KiB, read now; null when the common case does not hold. */
function readAnswer(
  path: string,
  maxRevivals: number,
  table: LockTable,
  window: Buffer,
): BulkAnswer | null {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch {
    return null;
  }
  try {
    // Before the fstat: the read is no earlier than this.
    const readAt = BigInt(Date.now()) * 1_000_000n;
    const stats = fstatSync(fd, { bigint: true });
    if (!stats.isFile() || mayBeLocked(table, Number(stats.ino))) return null;
    const size = Number(stats.size);
    const offset = Math.max(0, size - WINDOW_BYTES);
    const bytes = window.subarray(0, size - offset);
    let filled = 0;
    while (filled < bytes.length) {
      const read = readSync(fd, bytes, filled, bytes.length - filled, offset + filled);
      if (read === 0) break;
      filled += read;
    }
    const tail = { bytes: bytes.subarray(0, filled), offset, atEnd: filled === bytes.length };
    const read = tailReadOfWindow(path, tail);
    if (read === null) return null;
    let full: TailRead | null = null;
    let inspection: Inspection;
    const draft = draftInspection(path, maxRevivals, read, null, null);
    if (!('needsFullRead' in draft)) inspection = draft;
    else if (!draft.needsFullRead) inspection = finishInspection(draft, null);
    else {
      // The whole file is in the window: fold it from its start, from the same bytes.
      full = tailReadOfWindow(path, tail, 'full');
      if (full === null) return null;
      inspection = finishInspection(draft, full);
    }
    return settled(stats, readAt)
      ? { inspection, read: { key: fileKey(stats), read, full } }
      : { inspection };
  } finally {
    try {
      closeSync(fd);
    } catch {
      // A read-only descriptor: nothing is lost.
    }
  }
}

/**
 * A file's identity, size and times as one string: equal keys, the same bytes — a write, a
 * truncation, a rename over it or a new file at its path changes one of them (the change time,
 * which no one but the kernel sets, at the least).
 *
 * @example
 * fileKey(statSync(path, { bigint: true })); // '64768:5336182:40960:1767225600000000000:…'
 */
export function fileKey(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

/**
 * Whether the file had not changed for {@link SETTLED_NS} when it was read (`readAt`, on the
 * wall clock its times are on, in nanoseconds): a change after the read then gives it other
 * times.
 */
function settled(stats: BigIntStats, readAt: bigint): boolean {
  return stats.mtimeNs + SETTLED_NS < readAt && stats.ctimeNs + SETTLED_NS < readAt;
}

/**
 * Whether nobody can hold the claim file `claim`: it is not there (nothing to lock: its folder
 * was listed without it, or a stat finds nothing), or its inode is not in the lock table.
 * Anything else — a candidate, a stat that fails — is for the full probe. The listing is the
 * walk's, moments before the lock table was read: a claim file made after its folder was
 * listed is not seen, and the answer is the folder as it was listed (`status` shows a
 * snapshot; `revive` takes claims for real).
 */
function claimIsFree(claim: string, table: LockTable, listing: FolderListing | undefined): boolean {
  if (table.inodes.size === 0) return true;
  if (listing?.folders.has(dirname(claim)) === true && !listing.claims.has(claim)) return true;
  try {
    const stats = statSync(claim, { throwIfNoEntry: false });
    return stats === undefined || !mayBeLocked(table, stats.ino);
  } catch {
    return false;
  }
}
