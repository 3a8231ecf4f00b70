import type { FileSystem } from '../src/transcript/index.ts';

/** What a {@link countingFileSystem} has seen so far. */
export interface IoCounts {
  writeCalls: number;
  bytesWritten: number;
  /** fdatasync calls on transcripts. */
  syncs: number;
  /** fsync calls on folders (a new transcript's entry). */
  folderSyncs: number;
  opens: number;
}

/**
 * Wrap a file system so that every write and sync is counted: how the bench reports the bytes
 * and sync calls of our own persistence without trusting the code it measures.
 *
 * @example
 * const { fileSystem, counts } = countingFileSystem(nodeFileSystem);
 * const session = await Session.create(path, meta, { fileSystem });
 * console.log(counts.bytesWritten, counts.syncs);
 */
export function countingFileSystem(inner: FileSystem): {
  fileSystem: FileSystem;
  counts: IoCounts;
} {
  const counts: IoCounts = { writeCalls: 0, bytesWritten: 0, syncs: 0, folderSyncs: 0, opens: 0 };
  const fileSystem: FileSystem = {
    ...inner,
    open: (path, mode) => {
      counts.opens += 1;
      return inner.open(path, mode);
    },
    write: async (fd, bytes) => {
      const written = await inner.write(fd, bytes);
      counts.writeCalls += 1;
      counts.bytesWritten += written;
      return written;
    },
    sync: (fd) => {
      counts.syncs += 1;
      return inner.sync(fd);
    },
    syncFolder: (path) => {
      counts.folderSyncs += 1;
      return inner.syncFolder(path);
    },
  };
  return { fileSystem, counts };
}
