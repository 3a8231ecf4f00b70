import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { link, lstat, mkdir, readFile, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Revival } from '../../src/revival/index.ts';
import { findTreeRoot } from '../../src/revival/tree-root.ts';
import { nodeFileSystem } from '../../src/transcript/file-system.ts';
import { claimPathOf, claimTree, probeTreeClaim } from '../../src/transcript/tree-claim.ts';
import { snapshotFolder } from '../support/transcripts.ts';
import { tempFolder } from './support/temp-folder.ts';
import { assistant, call, dispatch, META, user, writeTranscript } from './support/transcripts.ts';

/*
 * One reviver per tree: the claim beside a tree's root (`ROOT.jsonl.claim`), how revive takes
 * it from any run of the tree, and what it refuses — before it writes a byte or counts a
 * revival — when a link in the tree is not to be trusted.
 */

const folder = await tempFolder('tree-claim-', true);
let counter = 0;
const crashed = [user('Write a.txt'), assistant('', [call('c1')]), dispatch('c1')];

/** A crashed root with one crashed child, laid out as the composer lays them out. */
async function tree(childLink?: string): Promise<{ root: string; child: string; top: string }> {
  const top = join(folder, `t${counter++}`);
  const root = join(top, 'main.jsonl');
  const child = join(top, 'main.agents', 'child-1.jsonl');
  await writeTranscript(root, crashed);
  await writeTranscript(child, crashed, {
    meta: {
      ...META,
      agentId: 'child-1',
      parent: { transcript: childLink ?? '../main.jsonl', callId: 'spawn-1' },
    },
  });
  return { root, child, top };
}

describe('the tree claim', () => {
  test('a probe that cannot tell says so and counts the tree as claimed: inspect leaves it alone, with the reason', async () => {
    const { root, child } = await tree();
    let probed = 0;
    const blind = {
      ...nodeFileSystem,
      async isLocked(path: string) {
        probed += 1;
        if (path === claimPathOf(root))
          throw Object.assign(new Error('permission denied'), { code: 'EACCES' });
        return nodeFileSystem.isLocked(path);
      },
    };
    const holder = await probeTreeClaim(blind, root);
    assert.ok(probed > 0, 'the fault happened: the probe was refused');
    assert.match(holder?.unknownBecause ?? '', /cannot probe .*\.claim: EACCES/);
    const found = await Revival.inspect({ path: child, maxRevivals: 3, fileSystem: blind });
    assert.equal(found.revivable, false);
    assert.equal(found.reason, 'running');
    assert.match(
      found.detail ?? '',
      /may be being revived: cannot probe .*EACCES.*left alone until that can be checked/,
    );
    // With a probe that works, the same tree is revivable: it was the blindness, not the tree.
    assert.equal((await Revival.inspect({ path: child, maxRevivals: 3 })).revivable, true);
  });

  test('a second claimer is refused, told the holder (pid, since); release removes the file', async () => {
    const { root } = await tree();
    const first = await claimTree(nodeFileSystem, root, new Date('2026-01-01T09:00:00.000Z'));
    assert.ok(first.ok);
    const second = await claimTree(nodeFileSystem, root, new Date());
    assert.ok(!second.ok);
    assert.equal(second.holder.pid, process.pid);
    assert.equal(second.holder.since, '2026-01-01T09:00:00.000Z');
    assert.match(second.detail, new RegExp(`being revived by pid ${process.pid} since 2026-01-01`));
    assert.equal((await probeTreeClaim(nodeFileSystem, root))?.pid, process.pid);
    assert.equal(((await stat(claimPathOf(root))).mode & 0o777).toString(8), '600');
    await first.claim.release();
    await assert.rejects(stat(claimPathOf(root)), { code: 'ENOENT' }, 'no claim file is left');
    assert.equal(await probeTreeClaim(nodeFileSystem, root), null);
    const third = await claimTree(nodeFileSystem, root, new Date());
    assert.ok(third.ok, 'the tree can be claimed again');
    await third.claim.release();
  });

  test('a claim file that is a symlink is refused, its target untouched', async () => {
    const { root } = await tree();
    const target = join(folder, `target-${counter++}`);
    await writeFile(target, 'precious');
    await symlink(target, claimPathOf(root));
    assert.ok((await lstat(claimPathOf(root))).isSymbolicLink(), 'the symlink is there');
    const claimed = await claimTree(nodeFileSystem, root, new Date());
    assert.ok(!claimed.ok);
    assert.match(claimed.detail, /not a claim file/);
    assert.equal(await readFile(target, 'utf8'), 'precious');
  });

  test('a claim file with a second name (a hard link) is never taken', async () => {
    const { root } = await tree();
    await writeFile(claimPathOf(root), '');
    await link(claimPathOf(root), join(folder, `other-name-${counter++}`));
    assert.equal((await stat(claimPathOf(root))).nlink, 2, 'the hard link exists');
    const claimed = await claimTree(nodeFileSystem, root, new Date());
    assert.ok(!claimed.ok, 'a file another name can reach is not a claim');
  });

  test('a holder whose claim file was deleted knows it, and revive refuses to work under it', async () => {
    const { root, child } = await tree();
    const claimed = await Revival.claimTree({ path: child });
    assert.ok(claimed.ok);
    assert.equal(claimed.claim.root, root, 'the claim is the root’s, found from the child');
    assert.equal(await claimed.claim.verify(), true);
    await unlink(claimPathOf(root));
    await assert.rejects(stat(claimPathOf(root)), { code: 'ENOENT' }, 'the file was deleted');
    assert.equal(await claimed.claim.verify(), false);
    const before = await snapshotFolder(folder);
    const revived = await Revival.revive({
      path: child,
      agentId: 'child-1',
      maxRevivals: 2,
      treeClaim: claimed.claim,
    });
    assert.ok(!revived.ok);
    assert.equal(revived.reason, 'running');
    assert.deepEqual(await snapshotFolder(folder), before, 'nothing was written');
    await claimed.claim.release();
  });
});

describe('revive claims the whole tree, from any of its runs', () => {
  test('while the root is claimed, reviving a child is refused naming the reviver, and nothing changes', async () => {
    const { root, child, top } = await tree();
    const before = await snapshotFolder(top);
    const claimed = await claimTree(nodeFileSystem, root, new Date('2026-01-01T10:00:00.000Z'));
    assert.ok(claimed.ok);
    const revived = await Revival.revive({ path: child, agentId: 'child-1', maxRevivals: 2 });
    assert.ok(!revived.ok);
    assert.equal(revived.reason, 'running');
    assert.match(revived.detail, new RegExp(`pid ${process.pid} since 2026-01-01T10:00:00.000Z`));
    const found = await Revival.inspect({ path: child, maxRevivals: 2 });
    assert.equal(found.reason, 'running');
    assert.equal(found.reviver?.pid, process.pid);
    assert.equal(found.reviver?.root, root);
    // The claimer itself is not told its own claim is another reviver.
    const own = await Revival.inspect({ path: child, maxRevivals: 2, treeClaim: claimed.claim });
    assert.equal(own.revivable, true);
    await claimed.claim.release();
    assert.deepEqual(await snapshotFolder(top), before, 'every file byte-identical');
  });

  test('revive of a root takes the claim; another process reviving its child is refused; closing releases it', async () => {
    const { root, child } = await tree();
    const revived = await Revival.revive({ path: root, agentId: META.agentId, maxRevivals: 2 });
    assert.ok(revived.ok);
    assert.equal(revived.treeClaim.root, root);
    await stat(claimPathOf(root));
    const second = await reviveInChild(child);
    assert.equal(second.killed, false, 'revive hung');
    assert.ok(!second.ok);
    assert.equal(second.reason, 'running');
    assert.match(second.detail ?? '', new RegExp(`being revived by pid ${process.pid}`));
    await revived.session.close();
    await assert.rejects(stat(claimPathOf(root)), { code: 'ENOENT' });
    const third = await Revival.revive({ path: child, agentId: 'child-1', maxRevivals: 2 });
    assert.ok(third.ok, third.ok ? '' : third.detail);
    await third.session.close();
  });

  test("the seed's flow in one process, without claimTree: revive the child, resume it, revive its parent; the claim lasts until the last session closes", async () => {
    const { root, child } = await tree();
    const first = await Revival.revive({ path: child, agentId: 'child-1', maxRevivals: 2 });
    assert.ok(first.ok, first.ok ? '' : first.detail);
    assert.equal(first.treeClaim.root, root, 'the child claimed its whole tree');
    // Resumed: the revived child goes on writing under its own id while its parent is revived.
    await first.session.append({
      type: 'message',
      role: 'user',
      content: [{ type: 'text', text: 'go on' }],
    });
    const parent = await Revival.revive({ path: root, agentId: META.agentId, maxRevivals: 2 });
    assert.ok(parent.ok, parent.ok ? '' : parent.detail);
    assert.equal(parent.treeClaim, first.treeClaim, 'the parent joined the claim the child holds');
    // One transcript still has one writer: a second revive of the open child is refused.
    const again = await Revival.revive({ path: child, agentId: 'child-1', maxRevivals: 2 });
    assert.ok(!again.ok);
    assert.equal(again.reason, 'running');
    // Another process is refused while either session is open.
    const other = await reviveInChild(child);
    assert.equal(other.killed, false, 'revive hung');
    assert.equal(other.reason, 'running');
    await first.session.close();
    await stat(claimPathOf(root)); // the parent's session still holds the tree
    assert.equal((await reviveInChild(child)).reason, 'running');
    await parent.session.close();
    await assert.rejects(stat(claimPathOf(root)), { code: 'ENOENT' }, 'released by the last close');
    const fresh = await Revival.claimTree({ path: child });
    assert.ok(fresh.ok, 'the tree can be claimed again');
    await fresh.claim.release();
  });

  test('a claim of another tree is a programmer error', async () => {
    const one = await tree();
    const other = await tree();
    const claimed = await Revival.claimTree({ path: one.root });
    assert.ok(claimed.ok);
    await assert.rejects(
      Revival.revive({
        path: other.child,
        agentId: 'child-1',
        maxRevivals: 2,
        treeClaim: claimed.claim,
      }),
      TypeError,
    );
    await claimed.claim.release();
  });
});

const REVIVE_SCRIPT = `
const { Revival } = await import(${JSON.stringify(fileURLToPath(new URL('../../src/revival/index.ts', import.meta.url)))});
const revived = await Revival.revive({ path: process.argv[1], agentId: 'child-1', maxRevivals: 2 });
process.stdout.write(JSON.stringify(revived.ok ? { ok: true, unfollowedLink: revived.unfollowedLink } : revived));
if (revived.ok) await revived.session.close();
process.exit(0);
`;

/** Revive `path` in a child process that is killed after `timeoutMs`: a hang is a failure. */
function reviveInChild(
  path: string,
  timeoutMs = 20_000,
): Promise<{
  ok: boolean;
  reason?: string;
  detail?: string;
  unfollowedLink?: string;
  killed: boolean;
}> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', REVIVE_SCRIPT, path],
      { timeout: timeoutMs, killSignal: 'SIGKILL' },
      (error, stdout) => {
        if (error !== null && (error as { killed?: boolean }).killed === true) {
          resolve({ ok: false, killed: true });
          return;
        }
        resolve({ ...(JSON.parse(stdout || '{}') as { ok: boolean }), killed: false });
      },
    );
  });
}

describe('validate, then commit: a link to a FIFO or a device is refused before anything is written', () => {
  const mkfifo = (path: string) =>
    new Promise<void>((resolve, reject) =>
      execFile('mkfifo', [path], (error) => (error === null ? resolve() : reject(error))),
    );

  for (const [name, makeLink] of [
    [
      "the child's session-meta names a FIFO outside the tree as its parent",
      async (top: string) => {
        const fifo = join(top, 'outside', 'fifo');
        await mkdir(join(top, 'outside'));
        await mkfifo(fifo);
        assert.ok((await lstat(fifo)).isFIFO(), 'the FIFO exists');
        return '../outside/fifo';
      },
    ],
    [
      "the child's session-meta names /dev/zero as its parent",
      async () => {
        assert.ok((await lstat('/dev/zero')).isCharacterDevice(), '/dev/zero is a device');
        return '/dev/zero';
      },
    ],
  ] as const) {
    test(`${name}: the link is not followed but reported; the child is revived in its layout's tree`, async () => {
      const top = join(folder, `t${counter++}`);
      await mkdir(top);
      const parentLink = await makeLink(top);
      const root = join(top, 'main.jsonl');
      const child = join(top, 'main.agents', 'child-1.jsonl');
      await writeTranscript(root, crashed);
      await writeTranscript(child, crashed, {
        meta: { ...META, agentId: 'child-1', parent: { transcript: parentLink, callId: 's1' } },
      });
      const before = await snapshotFolder(join(top, 'main.agents'));
      const rootBytes = await readFile(root);
      const answer = await reviveInChild(child);
      assert.equal(answer.killed, false, 'revive hung: the link was followed');
      assert.equal(answer.ok, true, answer.detail);
      assert.match(
        answer.unfollowedLink ?? '',
        /is not its parent in this tree .*the link is not followed, and the tree is the layout's/,
      );
      assert.notDeepEqual(await snapshotFolder(join(top, 'main.agents')), before, 'revived');
      assert.deepEqual(await readFile(root), rootBytes, 'the parent is untouched');
      assert.equal((await Revival.inspect({ path: child, maxRevivals: 2 })).revivalsUsed, 1);
    });
  }

  test('a child outside any *.agents folder whose link cannot be followed is revived as the root of its own tree', async () => {
    const top = join(folder, `t${counter++}`);
    await mkdir(join(top, 'elsewhere'), { recursive: true });
    const parent = join(top, 'main.jsonl');
    await writeTranscript(parent, crashed);
    const parentBytes = await readFile(parent);
    // The application put its child where it liked: not in main.agents/.
    const child = join(top, 'elsewhere', 'child-1.jsonl');
    await writeTranscript(child, crashed, {
      meta: { ...META, agentId: 'child-1', parent: { transcript: '../main.jsonl', callId: 's1' } },
    });
    const revived = await Revival.revive({ path: child, agentId: 'child-1', maxRevivals: 2 });
    assert.ok(revived.ok, revived.ok ? '' : revived.detail);
    assert.equal(revived.treeClaim.root, child, 'its own root');
    await stat(claimPathOf(child));
    assert.match(
      revived.unfollowedLink ?? '',
      /its layout gives it no parent\); the link is not followed, and it is the root of its own tree/,
    );
    assert.deepEqual(revived.interrupted, ['c1']);
    await revived.session.close();
    assert.deepEqual(await readFile(parent), parentBytes, 'the parent is untouched');
    await assert.rejects(stat(claimPathOf(parent)), { code: 'ENOENT' }, 'its claim was not taken');
  });

  test('the parent transcript by layout is itself a FIFO: refused quickly, nothing changed', async () => {
    const top = join(folder, `t${counter++}`);
    await mkdir(top);
    const root = join(top, 'main.jsonl');
    await mkfifo(root);
    assert.ok((await lstat(root)).isFIFO(), 'the FIFO exists');
    const child = join(top, 'main.agents', 'child-1.jsonl');
    await writeTranscript(child, crashed, {
      meta: { ...META, agentId: 'child-1', parent: { transcript: '../main.jsonl', callId: 's1' } },
    });
    const before = await snapshotFolder(join(top, 'main.agents'));
    const answer = await reviveInChild(child);
    assert.equal(answer.killed, false, 'revive hung');
    assert.equal(answer.reason, 'unreadable');
    assert.match(answer.detail ?? '', /is not a regular file/);
    assert.deepEqual(await snapshotFolder(join(top, 'main.agents')), before);
    await assert.rejects(stat(claimPathOf(root)), { code: 'ENOENT' }, 'no claim file was made');
  });

  test('a pending join waiting on a child whose transcript is a FIFO: refused before opening', async () => {
    const top = join(folder, `t${counter++}`);
    await mkdir(join(top, 'main.agents'), { recursive: true });
    const root = join(top, 'main.jsonl');
    await writeTranscript(root, [
      user('Delegate'),
      assistant('', [call('w1', 'task_wait')]),
      dispatch('w1', 'task_wait', ['child-1']),
    ]);
    await mkfifo(join(top, 'main.agents', 'child-1.jsonl'));
    const rootBytes = await readFile(root);
    const revived = await Revival.revive({ path: root, agentId: META.agentId, maxRevivals: 2 });
    assert.ok(!revived.ok);
    assert.equal(revived.reason, 'unreadable');
    assert.match(revived.detail, /child-1.*is not a regular file/);
    assert.deepEqual(await readFile(root), rootBytes);
  });

  test('findTreeRoot walks up through the layout and checks every link', async () => {
    const { root, child } = await tree();
    const grandchild = join(
      root.slice(0, -'.jsonl'.length),
      '..',
      'main.agents',
      'child-1.agents',
      'g.jsonl',
    );
    await writeTranscript(grandchild, crashed, {
      meta: { ...META, agentId: 'g', parent: { transcript: '../child-1.jsonl', callId: 's2' } },
    });
    const found = await findTreeRoot(grandchild, nodeFileSystem);
    assert.ok(found.ok);
    assert.equal(found.root, root);
    assert.deepEqual(found.chain.slice(1), [child, root]);
  });
});
