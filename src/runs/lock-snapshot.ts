/**
 * One look at the kernel's lock table for a whole `status`: `inspect` asks, per transcript,
 * whether a live process holds its writer lock (a kernel lock on the transcript itself), and on
 * Linux each answer reads `/proc/locks`. Over ten thousand transcripts that is ten thousand
 * reads of the same table. Here it is read once: a transcript whose inode is not in that table
 * is not locked (one stat, nothing more); one whose inode is there gets the full check. The
 * answer is a snapshot taken when `status` started, which is what `status` shows anyway;
 * `revive` takes locks for real. Nothing but the kernel's table decides: a nametag deleted or
 * forged beside a transcript changes no answer.
 *
 * Its reads block (by default it wraps {@link blockingReadFileSystem}): `status` reads
 * thousands of small files one after another and does nothing else meanwhile, and a blocking
 * read of a cached file costs a fraction of a thread-pool round trip.
 *
 * @module
 */
import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { blockingReadFileSystem, type FileSystem } from '../transcript/file-system.ts';

/**
 * A file system that answers `isLocked` from one snapshot of `/proc/locks`, falling back to
 * the real probe for candidates, and everywhere `/proc/locks` cannot be read.
 *
 * @example
 * const fileSystem = await lockSnapshotFileSystem();
 * await Revival.inspect({ path, maxRevivals: 3, fileSystem });
 */
export async function lockSnapshotFileSystem(
  base: FileSystem = blockingReadFileSystem,
  table: LockTable | null = readLockTable(),
): Promise<FileSystem> {
  if (table === null) return base;
  return {
    ...base,
    async isLocked(path) {
      if (table.inodes.size === 0) return false;
      let inode: string;
      try {
        inode = String(statSync(path, { bigint: true }).ino);
      } catch (error) {
        // No transcript: nobody can hold it.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        return base.isLocked(path);
      }
      return table.inodes.has(inode) ? base.isLocked(path) : false;
    },
  };
}

/**
 * The kernel's lock table as `status` read it when it started: the inodes some lock is on,
 * whatever their device (a candidate is then checked in full). Null where `/proc/locks` cannot
 * be read (not Linux): every probe is then the real one.
 *
 * @example
 * const table = readLockTable();
 * const surelyFree = table !== null && !mayBeLocked(table, stats.ino);
 */
export interface LockTable {
  /** Inode numbers, in decimal, as the table writes them. */
  inodes: ReadonlySet<string>;
}

/**
 * Read `/proc/locks` once; null when it cannot be read.
 *
 * @example
 * const table = readLockTable(); // { inodes: Set { '5336182', … } } on Linux
 */
export function readLockTable(): LockTable | null {
  let text: string;
  try {
    text = readFileSync('/proc/locks', 'latin1');
  } catch {
    return null;
  }
  return lockTableOf(text);
}

/**
 * {@link readLockTable}, read in the thread pool: the kernel takes a while to write the table
 * (tens of milliseconds on some machines), and the caller can do something else meanwhile.
 *
 * @example
 * const reading = readLockTableAsync();
 * const index = StatusIndex.open(paths, env); // meanwhile
 * const table = await reading;
 */
export async function readLockTableAsync(): Promise<LockTable | null> {
  try {
    return lockTableOf(await readFile('/proc/locks', 'latin1'));
  } catch {
    return null;
  }
}

function lockTableOf(text: string): LockTable {
  const inodes = new Set<string>();
  for (const match of text.matchAll(/\b[0-9a-f]+:[0-9a-f]+:(\d+)\b/g)) {
    if (match[1] !== undefined) inodes.add(match[1]);
  }
  return { inodes };
}

/**
 * Whether the table may hold a lock on the file with inode `ino` (from a stat): true sends the
 * caller to the full probe, which also checks the device. An inode number a double cannot hold
 * exactly is a candidate too.
 *
 * @example
 * if (mayBeLocked(table, fstatSync(fd).ino)) await probeWriterLock(fileSystem, path);
 */
export function mayBeLocked(table: LockTable, ino: number): boolean {
  if (table.inodes.size === 0) return false;
  return !Number.isSafeInteger(ino) || table.inodes.has(String(ino));
}
