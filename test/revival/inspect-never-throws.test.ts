import assert from 'node:assert/strict';
import { chmod, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Revival } from '../../src/revival/index.ts';
import { nodeFileSystem } from '../../src/transcript/file-system.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { baseTranscripts, MUTATING, mutate, readOnlyGuard } from './support/mutations.ts';
import { tempFolder } from './support/temp-folder.ts';
import { user, writeTranscript } from './support/transcripts.ts';

const seed = Number(process.env.SEED ?? Date.now()) >>> 0;
console.log('seed', seed);

const CAPS = [0, 1, 2, 3, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER];

describe('Nothing throws: "inspect never writes and never throws"', () => {
  test('10,000 mutated transcripts: no throw, no file created or changed, every answer well-formed', async () => {
    const random = seededRandom(seed);
    const bases = await baseTranscripts();
    const fileSystem = new MemoryFileSystem();
    const guard = readOnlyGuard(fileSystem);
    const reasons = new Map<string, number>();
    let throws = 0;
    const iterations = 10_000;
    for (let index = 0; index < iterations; index++) {
      const path = `/fuzz/${index % 7}.jsonl`;
      const input = mutate(bases[Math.floor(random() * bases.length)] as Buffer, random);
      fileSystem.writeFile(path, input);
      // Now and then a live writer holds the lock while inspect reads.
      const lockFd = random() < 0.05 ? await fileSystem.open(path, 'append') : null;
      if (lockFd !== null) fileSystem.tryLock(lockFd);
      const files = fileSystem.listFiles();
      const maxRevivals = CAPS[Math.floor(random() * CAPS.length)] as number;
      try {
        const found = await Revival.inspect({ path, maxRevivals, fileSystem: guard });
        const key = found.revivable ? `revivable:${found.tail}` : (found.reason ?? 'none');
        reasons.set(key, (reasons.get(key) ?? 0) + 1);
        assert.equal(typeof found.revivable, 'boolean');
        if (!found.revivable) assert.equal(typeof found.detail, 'string');
        if (found.reason === 'unreadable') assert.ok(found.detail?.startsWith(path));
      } catch (error) {
        throws += 1;
        console.log('threw on input', input.toString('base64'), error);
      }
      if (lockFd !== null) await fileSystem.close(lockFd);
      assert.deepEqual(fileSystem.readFile(path), input, `input ${index} was changed`);
      assert.deepEqual(fileSystem.listFiles(), files, `input ${index}: a file was created`);
    }
    console.log('answers', Object.fromEntries(reasons));
    assert.equal(throws, 0);
    const mutatingCalls = guard.calls.filter(
      (entry) =>
        MUTATING.has(entry.operation) || (entry.operation === 'open' && entry.mode !== 'read'),
    );
    assert.deepEqual(mutatingCalls, [], 'inspect made a call that can change a file');
    // The fuzz reached every kind of answer, or it proved less than it claims.
    for (const reason of ['unreadable', 'running', 'finished', 'revival-cap', 'empty']) {
      assert.ok((reasons.get(reason) ?? 0) > 0, `no input was ${reason}`);
    }
    assert.ok([...reasons.keys()].some((key) => key.startsWith('revivable')));
  });

  test('on the real file system: a folder, a missing file, a symlink loop, an unreadable file, junk — an answer each, nothing written', async () => {
    const folder = await tempFolder();
    const random = seededRandom(seed ^ 0x5eed);
    const bases = await baseTranscripts();
    const aFolder = join(folder, 'folder.jsonl');
    await mkdir(aFolder);
    await symlink(join(folder, 'loop.jsonl'), join(folder, 'loop.jsonl'));
    const locked = join(folder, 'locked.jsonl');
    await writeTranscript(locked, [user('Hi')]);
    await chmod(locked, 0o000);
    const paths = [aFolder, join(folder, 'missing.jsonl'), join(folder, 'loop.jsonl'), locked];
    for (let index = 0; index < 200; index++) {
      const path = join(folder, `fuzz-${index}.jsonl`);
      await writeFile(path, mutate(bases[index % bases.length] as Buffer, random));
      paths.push(path);
    }
    const before = new Map<string, Buffer | null>();
    for (const path of paths) before.set(path, await readFile(path).catch(() => null));
    const listing = (await readdir(folder)).sort();
    for (const path of paths) {
      const fileSystem = readOnlyGuard(nodeFileSystem);
      const found = await Revival.inspect({ path, maxRevivals: 2, fileSystem });
      assert.equal(typeof found.revivable, 'boolean');
      assert.ok(!fileSystem.calls.some((entry) => MUTATING.has(entry.operation)), path);
    }
    assert.deepEqual((await readdir(folder)).sort(), listing);
    for (const path of paths)
      assert.deepEqual(await readFile(path).catch(() => null), before.get(path), path);
    await chmod(locked, 0o600);
  });
});
