import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecordingFileSystem } from '../../crashtest/recording-file-system.ts';
import { Session } from '../../src/transcript/session.ts';
import { SessionError } from '../../src/transcript/session-error.ts';
import { acquireWriterLock, lockPathOf } from '../../src/transcript/writer-lock.ts';
import { fileSystemError } from '../support/memory-file-system.ts';

/*
 * Two bugs the crashtest I/O-error loop found in the transcript layer, pinned down:
 * a writer lock whose holder name could not be written stayed held by a leaked descriptor
 * (the transcript then looked `running` to everyone until the process died), and a failed
 * create whose lock release also failed threw a raw errno error instead of a SessionError.
 */

const meta = { agentId: 'main', agentType: 'main', label: 'main', model: 'test:model' };

describe('writer lock under I/O errors', () => {
  for (const failing of ['truncate', 'write'] as const) {
    it(`releases the lock when writing the holder's name fails (${failing})`, async () => {
      const fileSystem = new RecordingFileSystem();
      fileSystem.putFile('/runs/a.jsonl', Buffer.alloc(0));
      let fired = 0;
      fileSystem.beforeCall = (operation, path) => {
        if (operation === failing && path.endsWith('.lock') && fired === 0) {
          fired += 1;
          throw fileSystemError('ENOSPC', operation, path);
        }
        return undefined;
      };
      await assert.rejects(acquireWriterLock(fileSystem, '/runs/a.jsonl', new Date(0)), /ENOSPC/);
      assert.equal(fired, 1, 'the fault fired');
      fileSystem.beforeCall = null;
      assert.equal(await fileSystem.isLocked(lockPathOf('/runs/a.jsonl')), false);
      const again = await acquireWriterLock(fileSystem, '/runs/a.jsonl', new Date(0));
      assert.equal(again.ok, true);
    });
  }

  it('a failed create throws a SessionError even when releasing its lock fails too', async () => {
    const fileSystem = new RecordingFileSystem();
    let fired = 0;
    fileSystem.beforeCall = (operation, path) => {
      const createsTranscript = operation === 'open' && path === '/runs/a.jsonl';
      const releases = operation === 'truncate' && path.endsWith('.lock') && fired > 0;
      if (createsTranscript || releases) {
        fired += 1;
        throw fileSystemError('EIO', operation, path);
      }
      return undefined;
    };
    await assert.rejects(Session.create('/runs/a.jsonl', meta, { fileSystem }), (error) => {
      assert.ok(SessionError.isInstance(error), `not a SessionError: ${String(error)}`);
      return true;
    });
    assert.equal(fired, 2, 'both faults fired');
  });
});
