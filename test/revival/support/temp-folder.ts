import { constants } from 'node:fs';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

/**
 * A fresh folder under the system's temp folder (or, with `memoryBacked`, under /dev/shm where
 * there is one: for tests about locks, not durability, where an fsync need not cost a disk
 * flush), removed when the test file ends.
 */
export async function tempFolder(prefix = 'revival-', memoryBacked = false): Promise<string> {
  let parent = tmpdir();
  if (memoryBacked) {
    try {
      await access('/dev/shm', constants.W_OK);
      parent = '/dev/shm';
    } catch {
      // No tmpfs: the system temp folder is only slower.
    }
  }
  const folder = await mkdtemp(join(parent, prefix));
  after(() => rm(folder, { recursive: true, force: true }));
  return folder;
}

/** A new path in `folder` on each call (`run-0.jsonl`, `run-1.jsonl`, …): one transcript per test. */
export function freshPaths(folder: string): () => string {
  let counter = 0;
  return () => join(folder, `run-${counter++}.jsonl`);
}
