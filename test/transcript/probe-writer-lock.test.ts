import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Revival } from '../../src/revival/index.ts';
import type { FileSystem } from '../../src/transcript/file-system.ts';
import { nametagPathOf, probeWriterLock } from '../../src/transcript/writer-lock.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';

const HOLDER = { pid: 4242, since: '2026-01-01T00:00:00.000Z', host: 'elsewhere' };

async function heldLock(): Promise<{ fileSystem: MemoryFileSystem; path: string }> {
  const fileSystem = new MemoryFileSystem();
  const path = '/runs/a.jsonl';
  fileSystem.writeFile(path, Buffer.from(''));
  const fd = await fileSystem.open(path, 'append');
  assert.equal(fileSystem.tryLock(fd), true);
  fileSystem.writeFile(nametagPathOf(path), JSON.stringify(HOLDER));
  return { fileSystem, path };
}

describe('probeWriterLock: who holds a transcript, found without locking', () => {
  test('nobody holds it: null, and nothing is created', async () => {
    const fileSystem = new MemoryFileSystem();
    fileSystem.writeFile('/runs/b.jsonl', Buffer.from(''));
    assert.equal(await probeWriterLock(fileSystem, '/runs/b.jsonl'), null);
    assert.deepEqual(fileSystem.listFiles(), ['/runs/b.jsonl']);
  });

  test('a live holder is named as it wrote itself into its nametag', async () => {
    const { fileSystem, path } = await heldLock();
    assert.deepEqual(await probeWriterLock(fileSystem, path), HOLDER);
  });

  test('a nametag whose close throws at once still names the holder (inspect says running)', async () => {
    const { fileSystem, path } = await heldLock();
    // Only the probe's descriptor of the nametag fails to close, and synchronously.
    const lockFds = new Set<number>();
    const failingClose = new Proxy(fileSystem, {
      get(target, key) {
        if (key === 'open') {
          return async (file: string, mode: Parameters<FileSystem['open']>[1]) => {
            const fd = await target.open(file, mode);
            if (file === nametagPathOf(path)) lockFds.add(fd);
            return fd;
          };
        }
        if (key === 'close') {
          return (fd: number) => {
            if (lockFds.has(fd)) throw new Error('EIO on close');
            return target.close(fd);
          };
        }
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as FileSystem;
    assert.deepEqual(await probeWriterLock(failingClose, path), HOLDER);
    const found = await Revival.inspect({ path, maxRevivals: 1, fileSystem: failingClose });
    assert.equal(found.reason, 'running');
  });

  test('a deleted nametag names nobody, but the transcript is still found locked', async () => {
    const { fileSystem, path } = await heldLock();
    fileSystem.removeFile(nametagPathOf(path));
    assert.equal(fileSystem.exists(nametagPathOf(path)), false, 'the nametag was deleted');
    assert.deepEqual(await probeWriterLock(fileSystem, path), {
      pid: null,
      since: null,
      host: null,
    });
  });
});
