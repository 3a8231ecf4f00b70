import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { lstat, mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { nodeFileSystem } from '../../src/transcript/file-system.ts';
import { claimPathOf, claimTree } from '../../src/transcript/tree-claim.ts';
import {
  assistant,
  call,
  dispatch,
  META,
  user,
  writeTranscript,
} from '../revival/support/transcripts.ts';
import { tempFolder } from '../revival/support/temp-folder.ts';
import { snapshotFolder } from '../support/transcripts.ts';
import { REPO, runCli, writeFixtureAgents } from './support/cli-fixtures.ts';

/*
 * `llm-agent revive` and the tree claim: a tree another reviver holds is refused naming the
 * holder (exit 7), and a tree whose links cannot be trusted — a child's session-meta naming a
 * FIFO or /dev/zero as its parent — is refused quickly with nothing written and no revival
 * counted (it used to hang while holding the lock, after counting one).
 */

const folder = await tempFolder('cli-tree-claim-', true);
const agents = await writeFixtureAgents(folder);
let counter = 0;
const crashed = [user('Do it'), assistant('', [call('c1')]), dispatch('c1')];

/** `llm-agent ...args`, killed after `timeoutMs`: a hang is a failure, not a stuck suite. */
function revive(args: string[], timeoutMs = 30_000) {
  return new Promise<{ code: number | null; stdout: string; stderr: string; killed: boolean }>(
    (resolve, reject) => {
      const child = spawn(
        join(REPO, 'node_modules/.bin/node'),
        [join(REPO, 'src/cli/main.ts'), 'revive', ...args],
        { cwd: folder, env: { ...process.env, NO_COLOR: '1' }, stdio: 'pipe' },
      );
      let stdout = '';
      let stderr = '';
      let killed = false;
      const timer = setTimeout(() => {
        killed = true;
        child.kill('SIGKILL');
      }, timeoutMs);
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr, killed });
      });
      child.stdin.end();
    },
  );
}

/** A crashed root waiting on a crashed child (agent types of the fixture's agents module). */
async function tree(
  parentLink = '../main.jsonl',
): Promise<{ top: string; root: string; child: string }> {
  const top = join(folder, `t${counter++}`);
  await mkdir(top);
  const root = join(top, 'main.jsonl');
  const child = join(top, 'main.agents', 'worker-1.jsonl');
  await writeTranscript(
    root,
    [
      user('Delegate'),
      assistant('', [call('w1', 'task_wait')]),
      dispatch('w1', 'task_wait', ['worker-1']),
    ],
    { meta: { ...META, agentId: 'main', agentType: 'main' } },
  );
  await writeTranscript(child, crashed, {
    meta: {
      ...META,
      agentId: 'worker-1',
      agentType: 'worker',
      parent: { transcript: parentLink, callId: 's1' },
    },
  });
  return { top, root, child };
}

describe('llm-agent revive: one reviver per tree', () => {
  test('a tree another reviver holds is refused with exit 7, naming its pid and since when; nothing written', async () => {
    const { top, root, child } = await tree();
    const before = await snapshotFolder(top);
    const claimed = await claimTree(nodeFileSystem, root, new Date('2026-01-01T11:00:00.000Z'));
    assert.ok(claimed.ok);
    try {
      const status = await runCli(['status', root, '--json'], { cwd: folder });
      const shown = JSON.parse(status.stdout) as {
        runs: { state: string; detail: string; children: { state: string; detail: string }[] }[];
      };
      for (const run of [shown.runs[0], shown.runs[0]?.children[0]]) {
        assert.equal(run?.state, 'running');
        assert.match(
          run?.detail ?? '',
          new RegExp(`the tree of .* is being revived by pid ${process.pid}`),
        );
      }
      for (const path of [root, child]) {
        const result = await revive([path, '--yes', '--agents', agents]);
        assert.equal(result.code, 7, result.stdout + result.stderr);
        assert.match(
          result.stdout,
          new RegExp(`being revived by pid ${process.pid} since 2026-01-01T11:00:00.000Z`),
        );
      }
    } finally {
      await claimed.claim.release();
    }
    assert.deepEqual(await snapshotFolder(top), before, 'every file byte-identical');
  });

  test('the tree revives once the claim is released, and leaves no claim file', async () => {
    const { root } = await tree();
    const result = await revive([root, '--yes', '--agents', agents]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /Revived runs:/);
    await assert.rejects(stat(claimPathOf(root)), { code: 'ENOENT' });
  });
});

describe('llm-agent revive: validate, then commit', () => {
  const mkfifo = (path: string) =>
    new Promise<void>((resolve, reject) =>
      execFile('mkfifo', [path], (error) => (error === null ? resolve() : reject(error))),
    );

  for (const kind of ['a FIFO', '/dev/zero'] as const) {
    test(`a child whose session-meta names ${kind} as its parent: refused quickly, nothing written, no revival counted`, async () => {
      let parentLink = '/dev/zero';
      if (kind === 'a FIFO') {
        const outside = `outside-${counter++}`;
        await mkdir(join(folder, outside));
        await mkfifo(join(folder, outside, 'fifo'));
        assert.ok((await lstat(join(folder, outside, 'fifo'))).isFIFO(), 'the FIFO exists');
        // From t<N>/main.agents/: up to the test folder, then outside the tree.
        parentLink = `../../${outside}/fifo`;
      } else {
        assert.ok((await lstat('/dev/zero')).isCharacterDevice(), '/dev/zero is a device');
      }
      const { top, root, child } = await tree(parentLink);
      const before = await snapshotFolder(top);
      const rootBytes = await readFile(root);
      const result = await revive([child, '--yes', '--agents', agents]);
      assert.equal(result.killed, false, 'revive hung');
      assert.equal(result.code, 4, result.stdout + result.stderr);
      assert.match(result.stderr, /is not its parent in this tree.*nothing was written/);
      assert.deepEqual(await snapshotFolder(top), before, 'every file byte-identical');
      assert.deepEqual(await readFile(root), rootBytes);
    });
  }
});
