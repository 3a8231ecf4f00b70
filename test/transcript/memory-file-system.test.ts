import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { type FileSystem, nodeFileSystem } from '../../src/transcript/file-system.ts';
import { FaultyFileSystem } from '../../src/testing/index.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';

/*
 * The test doubles are only as good as their likeness: the same script of operations on the
 * in-memory FileSystem and on real files gives the same answers and errors; its crash images
 * keep what was synced; the fault wrapper fires exactly where its rules say.
 */

type Step = [string, (fileSystem: FileSystem, root: string) => Promise<unknown>];

const text = (value: string) => Buffer.from(value);

async function readAllOf(fileSystem: FileSystem, path: string): Promise<string> {
  const fd = await fileSystem.open(path, 'read');
  try {
    const buffer = Buffer.alloc(await fileSystem.size(fd));
    const read = await fileSystem.read(fd, buffer, 0);
    return buffer.toString('utf8', 0, read);
  } finally {
    await fileSystem.close(fd);
  }
}

const script: Step[] = [
  [
    'makeFolder returns the first folder made',
    (fs, root) => fs.makeFolder(join(root, 'a/b')).then((first) => first?.slice(root.length)),
  ],
  ['makeFolder of an existing folder', (fs, root) => fs.makeFolder(join(root, 'a'))],
  [
    'create',
    async (fs, root) => {
      const fd = await fs.open(join(root, 'a/b/t.jsonl'), 'create');
      const written = await fs.write(fd, text('one\n'));
      await fs.sync(fd);
      await fs.close(fd);
      return written;
    },
  ],
  ['create again is EEXIST', (fs, root) => fs.open(join(root, 'a/b/t.jsonl'), 'create')],
  [
    'append goes to the end',
    async (fs, root) => {
      const fd = await fs.open(join(root, 'a/b/t.jsonl'), 'append');
      await fs.write(fd, text('two\n'));
      await fs.close(fd);
      return readAllOf(fs, join(root, 'a/b/t.jsonl'));
    },
  ],
  ['read of a missing file is ENOENT', (fs, root) => fs.open(join(root, 'a/none'), 'read')],
  [
    'read-write of a missing file is ENOENT',
    (fs, root) => fs.open(join(root, 'a/none'), 'read-write'),
  ],
  ['append in a missing folder is ENOENT', (fs, root) => fs.open(join(root, 'zz/t'), 'append')],
  ['append of a missing file is ENOENT', (fs, root) => fs.open(join(root, 'a/none'), 'append')],
  [
    'identity of a descriptor is its file at the path; unlink leaves it with no links',
    async (fs, root) => {
      const path = join(root, 'a/b/t.jsonl');
      const fd = await fs.open(path, 'append');
      const opened = await fs.identity(fd);
      const atPath = await fs.identityOf(path);
      const same = atPath !== null && opened.dev === atPath.dev && opened.ino === atPath.ino;
      const kinds = [opened.kind, (await fs.identityOf(join(root, 'a')))?.kind, opened.links];
      await fs.rename(path, join(root, 'a/b/moved.jsonl'));
      const renamed = [await fs.identityOf(path), (await fs.identity(fd)).links];
      await fs.unlink(join(root, 'a/b/moved.jsonl'));
      const deleted = (await fs.identity(fd)).links;
      await fs.close(fd);
      return [same, kinds, renamed, deleted];
    },
  ],
  ['unlink of a missing file is ENOENT', (fs, root) => fs.unlink(join(root, 'a/none'))],
  [
    'a folder does not open for reading (EISDIR, before any read)',
    async (fs, root) => {
      const fd = await fs.open(join(root, 'a'), 'read');
      try {
        return await fs.read(fd, Buffer.alloc(10), 0);
      } finally {
        await fs.close(fd);
      }
    },
  ],
  ['a folder cannot open for appending', (fs, root) => fs.open(join(root, 'a'), 'append')],
  [
    'truncate through read-write, positional reads',
    async (fs, root) => {
      const fd = await fs.open(join(root, 'a/b/t.jsonl'), 'read-write');
      await fs.truncate(fd, 5);
      const buffer = Buffer.alloc(10);
      const read = await fs.read(fd, buffer, 2);
      const atEnd = await fs.read(fd, buffer, 5);
      const size = await fs.size(fd);
      await fs.close(fd);
      return [buffer.toString('utf8', 0, read), atEnd, size];
    },
  ],
  [
    'truncate on a read-only descriptor fails',
    async (fs, root) => {
      const fd = await fs.open(join(root, 'a/b/t.jsonl'), 'read');
      try {
        return await fs.truncate(fd, 1);
      } finally {
        await fs.close(fd);
      }
    },
  ],
  [
    'create is exclusive, rename replaces',
    async (fs, root) => {
      const fd = await fs.open(join(root, 'a/b/side.tmp'), 'create');
      await fs.write(fd, text('side'));
      await fs.close(fd);
      await fs.open(join(root, 'a/b/side.tmp'), 'create').then(
        () => assert.fail('a second create succeeded'),
        (error) => assert.equal(error.code, 'EEXIST'),
      );
      await fs.rename(join(root, 'a/b/side.tmp'), join(root, 'a/b/t.jsonl'));
      await fs.syncFolder(join(root, 'a/b'));
      return readAllOf(fs, join(root, 'a/b/t.jsonl'));
    },
  ],
  [
    'rename of a missing file is ENOENT',
    (fs, root) => fs.rename(join(root, 'nope'), join(root, 'x')),
  ],
  ['syncFolder of a missing folder is ENOENT', (fs, root) => fs.syncFolder(join(root, 'nope'))],
  [
    'one lock per file, released by close',
    async (fs, root) => {
      const path = join(root, 'a/t.lock');
      const first = await fs.open(path, 'lock');
      const second = await fs.open(path, 'lock');
      const results = [fs.tryLock(first), fs.tryLock(second), fs.tryLock(first)];
      await fs.close(first);
      results.push(fs.tryLock(second));
      await fs.close(second);
      return results;
    },
  ],
];

function outcome(settled: PromiseSettledResult<unknown>): unknown {
  if (settled.status === 'fulfilled') return { value: settled.value ?? null };
  return { error: (settled.reason as NodeJS.ErrnoException).code };
}

test('the in-memory FileSystem answers as real files do', async () => {
  const folder = await makeTempFolder();
  try {
    const memory = new MemoryFileSystem();
    memory.makeFolderSync(folder);
    for (const [name, step] of script) {
      const real = outcome(
        (
          await Promise.allSettled([step(nodeFileSystem, folder)])
        )[0] as PromiseSettledResult<unknown>,
      );
      const modelled = outcome(
        (await Promise.allSettled([step(memory, folder)]))[0] as PromiseSettledResult<unknown>,
      );
      assert.deepEqual(modelled, real, name);
    }
    assert.equal(memory.openDescriptors(), 0);
  } finally {
    await removeFolder(folder);
  }
});

test('a crash image keeps synced bytes and synced names only', async () => {
  const memory = new MemoryFileSystem();
  await memory.makeFolder('/runs');
  const fd = await memory.open('/runs/t', 'create');
  await memory.write(fd, text('synced\n'));
  await memory.sync(fd);
  await memory.write(fd, text('not yet\n'));
  // The file's name was never made durable: a power cut now loses the file.
  assert.equal(memory.crashImage().exists('/runs/t'), false);
  await memory.syncFolder('/');
  await memory.syncFolder('/runs');
  assert.equal(memory.crashImage().readFile('/runs/t').toString(), 'synced\n');
  assert.equal(
    memory.crashImage({ unsynced: 'keep' }).readFile('/runs/t').toString(),
    'synced\nnot yet\n',
  );
  const torn = memory.crashImage({
    unsynced: ({ durable, current }) => current.subarray(0, durable.length + 3),
  });
  assert.equal(torn.readFile('/runs/t').toString(), 'synced\nnot');
  await memory.close(fd);
  assert.equal(memory.readDurable('/runs/t').toString(), 'synced\n');
});

test('the fault wrapper fires on the nth matching call, once or forever, and records every call', async () => {
  const fileSystem = new FaultyFileSystem(new MemoryFileSystem(), {
    keepBytes: true,
    rules: [
      { operation: 'write', path: '/t', nth: 2, fault: { kind: 'error', code: 'ENOSPC' } },
      { operation: 'sync', nth: 2, repeat: 'forever', fault: { kind: 'error', code: 'EIO' } },
      { operation: 'write', path: '/t', nth: 4, fault: { kind: 'short-write', bytes: 2 } },
    ],
  });
  const fd = await fileSystem.open('/t', 'create');
  assert.equal(await fileSystem.write(fd, text('aaaa')), 4);
  await assert.rejects(fileSystem.write(fd, text('bbbb')), { code: 'ENOSPC' });
  assert.equal(await fileSystem.write(fd, text('cccc')), 4);
  assert.equal(await fileSystem.write(fd, text('dddd')), 2);
  await fileSystem.sync(fd);
  await assert.rejects(fileSystem.sync(fd), { code: 'EIO' });
  await assert.rejects(fileSystem.sync(fd), { code: 'EIO' });
  await fileSystem.close(fd);
  assert.equal((fileSystem.base as MemoryFileSystem).readFile('/t').toString(), 'aaaaccccdd');
  assert.deepEqual(
    fileSystem.fired.map((fired) => `${fired.call.operation}#${fired.call.index}`),
    ['write#2', 'write#4', 'sync#6', 'sync#7'],
  );
  assert.equal(fileSystem.count('write', '/t'), 4);
  assert.equal(fileSystem.callsOf('write')[1]?.outcome, 'error');
  assert.equal(fileSystem.callsOf('write')[0]?.bytes?.toString(), 'aaaa');
});
