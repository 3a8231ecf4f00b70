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
): Promise<FileSystem> {
  let table: string;
  try {
    table = readFileSync('/proc/locks', 'latin1');
  } catch {
    return base;
  }
  const inodes = new Set<string>();
  for (const match of table.matchAll(/\b[0-9a-f]+:[0-9a-f]+:(\d+)\b/g)) {
    if (match[1] !== undefined) inodes.add(match[1]);
  }
  return {
    ...base,
    async isLocked(path) {
      if (inodes.size === 0) return false;
      let inode: string;
      try {
        inode = String(statSync(path, { bigint: true }).ino);
      } catch (error) {
        // No transcript: nobody can hold it.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        return base.isLocked(path);
      }
      return inodes.has(inode) ? base.isLocked(path) : false;
    },
  };
}
