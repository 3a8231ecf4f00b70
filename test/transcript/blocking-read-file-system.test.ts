import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readTailState } from '../../src/transcript/read-tail-state.ts';
import { blockingReadFileSystem, nodeFileSystem } from '../../src/transcript/file-system.ts';
import { scanTranscript } from '../../src/transcript/scan-transcript.ts';

const FIXTURES = new URL('../fixtures/v1/', import.meta.url).pathname;

test('blocking reads see every fixture exactly as the asynchronous file system does', async () => {
  const names = readdirSync(FIXTURES).filter((name) => name.endsWith('.jsonl'));
  assert.ok(names.length >= 6, `${names.length} fixtures`);
  for (const name of names) {
    const path = join(FIXTURES, name);
    assert.deepEqual(
      await scanTranscript(path, { fileSystem: blockingReadFileSystem }),
      await scanTranscript(path, { fileSystem: nodeFileSystem }),
      name,
    );
    assert.deepEqual(
      await readTailState(path, { fileSystem: blockingReadFileSystem }),
      await readTailState(path, { fileSystem: nodeFileSystem }),
      name,
    );
  }
});

test('blocking reads still fail as rejected promises, never as a throw', async () => {
  const missing = join(FIXTURES, 'no-such-transcript.jsonl');
  let opened: Promise<number> | undefined;
  assert.doesNotThrow(() => {
    opened = blockingReadFileSystem.open(missing, 'read');
  });
  await assert.rejects(opened as Promise<number>, { code: 'ENOENT' });
  // A descriptor number nothing has open.
  const closed = 1_000_000;
  await assert.rejects(blockingReadFileSystem.size(closed), { code: 'EBADF' });
  await assert.rejects(blockingReadFileSystem.close(closed), { code: 'EBADF' });
  await assert.rejects(blockingReadFileSystem.read(closed, Buffer.alloc(8), 0), { code: 'EBADF' });
  const scanned = await scanTranscript(missing, { fileSystem: blockingReadFileSystem });
  assert.equal(scanned.ok ? 'ok' : scanned.reason, 'missing');
});
