import assert from 'node:assert/strict';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { nodeFileSystem } from '../../src/transcript/file-system.ts';
import { acquireWriterLock, nametagPathOf } from '../../src/transcript/writer-lock.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';

/*
 * The nametag only names a lock's holder; when it cannot be written the lock holds all the
 * same, and the reason is kept (`nametagProblem`) rather than lost.
 */

const folders: string[] = [];
after(async () => {
  for (const folder of folders) await removeFolder(folder);
});

test('a nametag that cannot be written: the lock holds, and says why', async () => {
  const folder = await makeTempFolder();
  folders.push(folder);
  const path = join(folder, 'run.jsonl');
  await writeFile(path, '');
  // A folder where the nametag goes: the rename over it fails.
  await mkdir(nametagPathOf(path));
  await writeFile(join(nametagPathOf(path), 'inside'), 'x');
  const result = await acquireWriterLock(nodeFileSystem, path, new Date());
  assert.ok(result.ok, 'the lock is taken all the same');
  assert.match(
    result.lock.nametagProblem ?? '',
    /^cannot write .*run\.jsonl\.owner: (EISDIR|ENOTEMPTY|EEXIST)/,
  );
  assert.equal(await nodeFileSystem.isLocked(path), true);
  await result.lock.release();
  assert.deepEqual(
    (await readdir(folder)).sort(),
    ['run.jsonl', 'run.jsonl.owner'],
    'no temporary file left',
  );
});

test('a nametag written: no problem to report', async () => {
  const folder = await makeTempFolder();
  folders.push(folder);
  const path = join(folder, 'run.jsonl');
  await writeFile(path, '');
  const result = await acquireWriterLock(nodeFileSystem, path, new Date());
  assert.ok(result.ok);
  assert.equal(result.lock.nametagProblem, null);
  await result.lock.release();
});
