import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readFile, rename, stat, symlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { Revival } from '../../src/revival/index.ts';
import {
  agentsFoldersOf,
  agentsLayout,
  type ChildLayout,
  layoutFoldersOf,
} from '../../src/subagents/child-layout.ts';
import { claimPathOf } from '../../src/transcript/tree-claim.ts';
import { tempFolder } from './support/temp-folder.ts';
import { assistant, call, dispatch, META, user, writeTranscript } from './support/transcripts.ts';

/*
 * The layout is the application's: Revival takes where a run's children live (`layout`), finds
 * a tree's root and claim through it, and looks for the children of pending joins where it says.
 */

const folder = await tempFolder('child-layout-', true);
let counter = 0;
const crashed = [user('Write a.txt'), assistant('', [call('c1')]), dispatch('c1')];

/** An application's own layout: the children of `X.jsonl` are `kids/X__<id>.jsonl`. */
const kidsLayout: ChildLayout = {
  childOf: (parentPath, agentId) =>
    join(dirname(parentPath), 'kids', `${basename(parentPath, '.jsonl')}__${agentId}.jsonl`),
  parentOf: (path) =>
    basename(dirname(path)) === 'kids' && basename(path).includes('__')
      ? join(dirname(dirname(path)), `${basename(path).split('__')[0]}.jsonl`)
      : null,
};

/** A crashed root and one crashed child, laid out by `kidsLayout`, the child linking its parent. */
async function kidsTree(): Promise<{ top: string; root: string; child: string }> {
  const top = join(folder, `t${counter++}`);
  const root = join(top, 'main.jsonl');
  const child = kidsLayout.childOf(root, 'child-1');
  await writeTranscript(root, crashed);
  await writeTranscript(child, crashed, {
    meta: { ...META, agentId: 'child-1', parent: { transcript: '../main.jsonl', callId: 's1' } },
  });
  return { top, root, child };
}

const mkfifo = (path: string) =>
  new Promise<void>((resolve, reject) =>
    execFile('mkfifo', [path], (error) => (error === null ? resolve() : reject(error))),
  );

describe('Revival takes the application child layout', () => {
  test('under a custom layout, a child is revived in its parent tree: the root claim, no unfollowed link', async () => {
    const { root, child } = await kidsTree();
    // Under the default layout the same child is in no tree: its link is reported, not followed.
    const alone = await Revival.claimTree({ path: child });
    assert.ok(alone.ok);
    assert.equal(alone.claim.root, child, 'by default, the child is its own root');
    await alone.claim.release();

    const revived = await Revival.revive({
      path: child,
      agentId: 'child-1',
      maxRevivals: 2,
      layout: kidsLayout,
    });
    assert.ok(revived.ok, revived.ok ? '' : revived.detail);
    assert.equal(revived.treeClaim.root, root, 'the claim is the root of the layout tree');
    assert.equal(revived.unfollowedLink, undefined, 'the link agrees with the layout');
    await stat(claimPathOf(root));
    // The seed's flow under this layout: the parent's revive joins the claim the child holds.
    const parent = await Revival.revive({
      path: root,
      agentId: META.agentId,
      maxRevivals: 2,
      layout: kidsLayout,
    });
    assert.ok(parent.ok, parent.ok ? '' : parent.detail);
    assert.equal(parent.treeClaim, revived.treeClaim);
    await revived.session.close();
    await parent.session.close();
    await assert.rejects(stat(claimPathOf(root)), { code: 'ENOENT' }, 'released by the last close');
  });

  test('inspect and claimTree look for the tree claim through the layout', async () => {
    const { root, child } = await kidsTree();
    const claimed = await Revival.claimTree({ path: child, layout: kidsLayout });
    assert.ok(claimed.ok);
    assert.equal(claimed.claim.root, root);
    const found = await Revival.inspect({ path: child, maxRevivals: 2, layout: kidsLayout });
    assert.equal(found.reason, 'running', 'the tree is claimed, found through the layout');
    assert.equal(found.reviver?.root, root);
    const blind = await Revival.inspect({ path: child, maxRevivals: 2 });
    assert.equal(blind.revivable, true, 'the default layout does not see this tree');
    await claimed.claim.release();
  });

  test("a pending join's child is looked for where the layout puts it: a FIFO there is refused", async () => {
    const top = join(folder, `t${counter++}`);
    const root = join(top, 'main.jsonl');
    await writeTranscript(root, [
      user('Delegate'),
      assistant('', [call('w1', 'task_wait')]),
      dispatch('w1', 'task_wait', ['child-1']),
    ]);
    await mkdir(join(top, 'kids'));
    await mkfifo(kidsLayout.childOf(root, 'child-1'));
    const bytes = await readFile(root);
    const revived = await Revival.revive({
      path: root,
      agentId: META.agentId,
      maxRevivals: 2,
      layout: kidsLayout,
    });
    assert.ok(!revived.ok);
    assert.equal(revived.reason, 'unreadable');
    assert.match(revived.detail, /child-1 \(.*kids\/main__child-1\.jsonl\) is not a regular file/);
    assert.deepEqual(await readFile(root), bytes, 'nothing written');
  });

  test("the layout's folders must be real folders: a symlinked kids/ is refused", async () => {
    const { top, child } = await kidsTree();
    await rename(join(top, 'kids'), join(top, 'real-kids'));
    await symlink(join(top, 'real-kids'), join(top, 'kids'));
    const bytes = await readFile(child);
    const revived = await Revival.revive({
      path: child,
      agentId: 'child-1',
      maxRevivals: 2,
      layout: kidsLayout,
    });
    assert.ok(!revived.ok, 'refused');
    assert.match(revived.detail, /kids/);
    assert.deepEqual(await readFile(child), bytes, 'nothing written');
  });

  test('layoutFoldersOf gives the *.agents folders for the default layout, and the folders a custom one made', () => {
    for (const path of [
      'r/main.jsonl',
      'r/main.agents/a.jsonl',
      'r/main.agents/a.agents/b.jsonl',
    ]) {
      assert.deepEqual(layoutFoldersOf(agentsLayout, path), agentsFoldersOf(path));
    }
    assert.deepEqual(layoutFoldersOf(kidsLayout, 'r/kids/main__a.jsonl'), ['r/kids']);
    assert.deepEqual(layoutFoldersOf(kidsLayout, 'r/main.jsonl'), []);
  });
});
