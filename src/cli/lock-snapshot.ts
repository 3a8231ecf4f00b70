/**
 * One look at the kernel's lock table for a whole `status`: `inspect` asks, per transcript,
 * whether a live process holds its writer lock, and on Linux each answer reads `/proc/locks`.
 * Over ten thousand transcripts that is ten thousand reads of the same table. Here it is read
 * once: a lock file whose inode is not in that table is not locked (no further I/O at all);
 * one whose inode is there gets the full check. The answer is a snapshot taken when `status`
 * started, which is what `status` shows anyway; `revive` takes locks for real. Given the lock
 * files a folder walk saw (`lockFiles`), a transcript without one costs no I/O at all.
 *
 * Its reads block (by default it wraps {@link blockingReadFileSystem}): `status` reads
 * thousands of small files one after another and does nothing else meanwhile, and a blocking
 * read of a cached file costs a fraction of a thread-pool round trip.
 *
 * @module
 */
import { readFileSync, statSync } from 'node:fs';
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
  lockFiles?: ReadonlySet<string>,
): Promise<FileSystem> {
  let table: string;
  try {
    table = readFileSync('/proc/locks', 'latin1');
  } catch {
    return {
      ...base,
      isLocked: async (path) =>
        lockFiles !== undefined && !lockFiles.has(path) ? false : base.isLocked(path),
    };
  }
  const inodes = new Set<string>();
  for (const match of table.matchAll(/\b[0-9a-f]+:[0-9a-f]+:(\d+)\b/g)) {
    if (match[1] !== undefined) inodes.add(match[1]);
  }
  return {
    ...base,
    async isLocked(path) {
      if (inodes.size === 0) return false;
      if (lockFiles !== undefined && !lockFiles.has(path)) return false;
      let inode: string;
      try {
        inode = String(statSync(path, { bigint: true }).ino);
      } catch (error) {
        // No lock file: nobody has ever written it, or nobody can hold it now.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        return base.isLocked(path);
      }
      return inodes.has(inode) ? base.isLocked(path) : false;
    },
  };
}
