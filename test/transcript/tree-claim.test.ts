import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { claimPathOf, claimTree } from '../../src/transcript/tree-claim.ts';
import { FaultyFileSystem } from '../../src/testing/index.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';

/*
 * The tree claim's identity check, with the file system's moves interleaved at the one moment
 * that matters: after the claimer locked an inode, before it proved that inode is the file at
 * the path.
 */

const ROOT = '/runs/main.jsonl';

describe('claimTree: the locked inode must be the file at the path', () => {
  test('a claim file unlinked between the lock and the check: the claimer tries again and holds the new file', async () => {
    const memory = new MemoryFileSystem();
    memory.writeFile(ROOT, '');
    let unlinked = 0;
    const fileSystem = new FaultyFileSystem(memory, {
      beforeCall: async (call) => {
        if (call.operation === 'identityOf' && call.path === claimPathOf(ROOT) && unlinked === 0) {
          unlinked += 1;
          memory.removeFile(claimPathOf(ROOT));
        }
      },
    });
    const claimed = await claimTree(fileSystem, ROOT, new Date());
    assert.equal(unlinked, 1, 'the claim file was unlinked after it was locked');
    assert.ok(claimed.ok);
    assert.equal(fileSystem.count('tryLock'), 2, 'it locked a second file');
    assert.equal(await claimed.claim.verify(), true, 'it holds the file now at the path');
    const second = await claimTree(memory, ROOT, new Date());
    assert.ok(!second.ok, 'and that file is the claim');
    await claimed.claim.release();
    assert.equal(memory.exists(claimPathOf(ROOT)), false);
    assert.equal(memory.openDescriptors(), 0);
  });

  test('a claim file replaced by another between the lock and the check: not taken; the replacement is claimed', async () => {
    const memory = new MemoryFileSystem();
    memory.writeFile(ROOT, '');
    let replaced = 0;
    const fileSystem = new FaultyFileSystem(memory, {
      beforeCall: async (call) => {
        if (call.operation === 'identityOf' && call.path === claimPathOf(ROOT) && replaced === 0) {
          replaced += 1;
          memory.writeFile(claimPathOf(ROOT), 'someone else');
        }
      },
    });
    const claimed = await claimTree(fileSystem, ROOT, new Date());
    assert.equal(replaced, 1, 'the file was replaced after it was locked');
    assert.ok(claimed.ok);
    assert.equal(fileSystem.count('tryLock'), 2);
    assert.equal(await claimed.claim.verify(), true);
    assert.match(memory.readFile(claimPathOf(ROOT)).toString(), /"pid":/);
    await claimed.claim.release();
  });

  test('a holder releasing never removes a file that is not its own', async () => {
    const memory = new MemoryFileSystem();
    memory.writeFile(ROOT, '');
    const claimed = await claimTree(memory, ROOT, new Date());
    assert.ok(claimed.ok);
    memory.writeFile(claimPathOf(ROOT), 'put there by someone');
    assert.equal(await claimed.claim.verify(), false, 'the holder sees it lost its file');
    await claimed.claim.release();
    assert.equal(memory.readFile(claimPathOf(ROOT)).toString(), 'put there by someone');
  });
});
