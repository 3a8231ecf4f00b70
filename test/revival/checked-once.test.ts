import assert from 'node:assert/strict';
import { resolve, join } from 'node:path';
import { test } from 'node:test';
import { Revival } from '../../src/revival/index.ts';
import type { Revived } from '../../src/revival/revive.ts';
import { inspectRun } from '../../src/runs/inspect-run.ts';
import { type FileSystem, nodeFileSystem } from '../../src/transcript/file-system.ts';
import { tempFolder } from './support/temp-folder.ts';
import {
  assistant,
  call,
  dispatch,
  META,
  parallelBatch,
  user,
  writeTranscript,
} from './support/transcripts.ts';

/*
 * Checked once under the claim: what was verified under a tree claim travels with it, so the
 * revives of a claimed tree do not find its root again, check a joined child again or inspect
 * a run again — and a claim taken anew checks everything again. Counted on a file system that
 * counts, per path: `identityOf` (each level of a root walk looks at its transcript; a join
 * check looks at the child's), and `isLocked` (only inspect's probe of a live writer asks it).
 */

const folder = await tempFolder('checked-once-');
let counter = 0;

/** A file system that counts what it is asked, per operation and path. */
function counting(): {
  fileSystem: FileSystem;
  count(operation: string, path: string): number;
  reset(): void;
} {
  const counts = new Map<string, number>();
  const bump = (operation: string, path: string) => {
    const key = `${operation} ${resolve(path)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  const fileSystem: FileSystem = {
    ...nodeFileSystem,
    identityOf(path) {
      bump('identityOf', path);
      return nodeFileSystem.identityOf(path);
    },
    isLocked(path) {
      bump('isLocked', path);
      return nodeFileSystem.isLocked(path);
    },
  };
  return {
    fileSystem,
    count: (operation, path) => counts.get(`${operation} ${resolve(path)}`) ?? 0,
    reset: () => counts.clear(),
  };
}

/** A crashed root whose join waits for child-1, and child-1 crashed mid-tool. */
async function tree(): Promise<{ root: string; child: string }> {
  const top = join(folder, `t${counter++}`);
  const root = join(top, 'main.jsonl');
  const child = join(top, 'main.agents', 'child-1.jsonl');
  await writeTranscript(root, parallelBatch());
  await writeTranscript(child, [user('Write a.txt'), assistant('', [call('c1')]), dispatch('c1')], {
    meta: { ...META, agentId: 'child-1', parent: { transcript: '../main.jsonl', callId: 'join' } },
  });
  return { root, child };
}

function revived(answer: Awaited<ReturnType<typeof Revival.revive>>): Revived {
  assert.ok(answer.ok, answer.ok ? '' : `${answer.reason}: ${answer.detail}`);
  return answer;
}

test('under one claim: the root is found once, each run inspected once, each join checked once', async () => {
  const { root, child } = await tree();
  const counted = counting();
  const { fileSystem } = counted;
  const claimed = await Revival.claimTree({ path: child, fileSystem });
  assert.ok(claimed.ok);
  const claim = claimed.claim;
  // Claiming walked from the child to the root once.
  assert.equal(counted.count('identityOf', root), 1);
  assert.equal(counted.count('identityOf', child), 1);
  // The application looks at both runs under the claim (as `revive --yes` re-plans under it).
  for (const path of [child, root]) {
    assert.equal((await inspectRun(path, 3, fileSystem, claim)).revivable, true);
  }
  assert.equal(counted.count('isLocked', child), 1, 'the child was inspected');
  assert.equal(counted.count('isLocked', root), 1, 'the root was inspected');
  counted.reset();
  const options = { maxRevivals: 3, fileSystem, treeClaim: claim };
  const first = revived(await Revival.revive({ path: child, agentId: 'child-1', ...options }));
  await first.session.close();
  // Only a walk up from the child looks at the root while the child is revived.
  assert.equal(
    counted.count('identityOf', root),
    0,
    "the child's revive did not walk to the root again",
  );
  assert.equal(counted.count('isLocked', child), 0, 'the child was not inspected again');
  counted.reset();
  const second = revived(await Revival.revive({ path: root, agentId: META.agentId, ...options }));
  await second.session.close();
  assert.deepEqual(
    second.pendingJoins.map((pending) => pending.agentIds),
    [['child-1']],
  );
  assert.equal(counted.count('isLocked', root), 0, 'the root was not inspected again');
  // The root's join waits for child-1: looked at once, not before and after the open.
  assert.equal(counted.count('identityOf', child), 1, 'the joined child was checked once');
  await claim.release();
});

test('a claim taken anew carries nothing: the root is found, the run inspected and the join checked again', async () => {
  const { root } = await tree();
  const counted = counting();
  const { fileSystem } = counted;
  const old = await Revival.claimTree({ path: root, fileSystem });
  assert.ok(old.ok);
  assert.equal((await inspectRun(root, 3, fileSystem, old.claim)).revivable, true);
  await old.claim.release();
  counted.reset();
  const claimed = await Revival.claimTree({ path: root, fileSystem });
  assert.ok(claimed.ok);
  assert.notEqual(claimed.claim, old.claim);
  assert.equal(counted.count('identityOf', root), 1, 'the new claim found the root itself');
  const child = join(root.replace(/\.jsonl$/, '.agents'), 'child-1.jsonl');
  const answer = revived(
    await Revival.revive({
      path: root,
      agentId: META.agentId,
      maxRevivals: 3,
      fileSystem,
      treeClaim: claimed.claim,
    }),
  );
  await answer.session.close();
  assert.equal(counted.count('isLocked', root), 1, 'inspected again under the new claim');
  assert.equal(counted.count('identityOf', child), 1, 'the joined child was checked again');
  await claimed.claim.release();
});

test('without a claim of its own, a revive checks everything itself, each join once', async () => {
  const { root, child } = await tree();
  const counted = counting();
  const options = { maxRevivals: 3, fileSystem: counted.fileSystem };
  const first = revived(await Revival.revive({ path: child, agentId: 'child-1', ...options }));
  await first.session.close();
  assert.equal(counted.count('identityOf', root), 1, 'the root was found, once');
  assert.equal(counted.count('isLocked', child), 1, 'the child was inspected, once');
  counted.reset();
  const second = revived(await Revival.revive({ path: root, agentId: META.agentId, ...options }));
  await second.session.close();
  assert.equal(counted.count('isLocked', root), 1, 'the root was inspected, once');
  assert.equal(counted.count('identityOf', child), 1, 'the joined child was checked once');
});
