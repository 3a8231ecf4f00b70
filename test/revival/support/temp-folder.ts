import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

/** A fresh folder under the system's temp folder, removed when the test file ends. */
export async function tempFolder(prefix = 'revival-'): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), prefix));
  after(() => rm(folder, { recursive: true, force: true }));
  return folder;
}
