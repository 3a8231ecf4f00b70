import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecordingFileSystem } from '../../crashtest/recording-file-system.ts';
import { Session } from '../../src/transcript/session.ts';
import { TranscriptError } from '../../src/transcript/transcript-error.ts';
import { acquireWriterLock, nametagPathOf } from '../../src/transcript/writer-lock.ts';
import { fileSystemError } from '../../src/testing/index.ts';

/*
 * The writer lock under I/O errors: a nametag that cannot be written costs only the name (the
 * lock is the kernel's, on the transcript itself, and stays held — then released as usual),
 * leaves no temporary file behind, and a failed create whose release also fails still throws a
 * TranscriptError rather than a raw errno error.
 */

const meta = { agentId: 'main', agentType: 'main', label: 'main', model: 'test:model' };

describe('writer lock under I/O errors', () => {
  for (const failing of ['open', 'write', 'rename'] as const) {
    it(`holds the lock when writing the nametag fails (${failing}), and leaves no temporary file`, async () => {
      const fileSystem = new RecordingFileSystem();
      fileSystem.putFile('/runs/a.jsonl', Buffer.alloc(0));
      let fired = 0;
      fileSystem.beforeCall = (operation, path) => {
        if (operation === failing && /\.owner\.[0-9a-f]+\.tmp$/.test(path) && fired === 0) {
          fired += 1;
          throw fileSystemError('ENOSPC', operation, path);
        }
        return undefined;
      };
      const result = await acquireWriterLock(fileSystem, '/runs/a.jsonl', new Date(0));
      assert.equal(fired, 1, 'the fault fired');
      fileSystem.beforeCall = null;
      assert.equal(result.ok, true);
      assert.equal(await fileSystem.isLocked('/runs/a.jsonl'), true, 'the lock is held');
      assert.deepEqual(fileSystem.listFiles(), ['/runs/a.jsonl'], 'no nametag, no temporary');
      const second = await acquireWriterLock(fileSystem, '/runs/a.jsonl', new Date(0));
      assert.equal(second.ok, false, 'a second writer is refused without a nametag');
      if (result.ok) await result.lock.release();
      assert.equal(await fileSystem.isLocked('/runs/a.jsonl'), false);
      const again = await acquireWriterLock(fileSystem, '/runs/a.jsonl', new Date(0));
      assert.equal(again.ok, true);
      assert.deepEqual(fileSystem.listFiles(), ['/runs/a.jsonl', nametagPathOf('/runs/a.jsonl')]);
    });
  }

  it('a failed create throws a TranscriptError even when releasing its lock fails too', async () => {
    const fileSystem = new RecordingFileSystem();
    let fired = 0;
    fileSystem.beforeCall = (operation, path) => {
      const writesTranscript = operation === 'write' && path === '/runs/a.jsonl';
      const releases = operation === 'close' && path === '/runs/a.jsonl' && fired > 0;
      if (writesTranscript || releases) {
        fired += 1;
        throw fileSystemError('EIO', operation, path);
      }
      return undefined;
    };
    await assert.rejects(Session.create('/runs/a.jsonl', meta, { fileSystem }), (error) => {
      assert.ok(TranscriptError.isInstance(error), `not a TranscriptError: ${String(error)}`);
      return true;
    });
    assert.equal(fired, 2, 'both faults fired');
  });
});
