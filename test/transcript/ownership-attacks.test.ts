import assert from 'node:assert/strict';
import {
  link,
  lstat,
  mkdir,
  readdir,
  readFile,
  rename,
  stat,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { reviveTranscript } from '../../src/revival/revive.ts';
import { agentsFoldersOf } from '../../src/subagents/child-layout.ts';
import { createChildSession } from '../../src/subagents/child-session.ts';
import { filePlaces } from '../../src/subagents/run-places.ts';
import { type FileSystem, nodeFileSystem } from '../../src/transcript/file-system.ts';
import { Session } from '../../src/transcript/session.ts';
import { TranscriptError } from '../../src/transcript/transcript-error.ts';
import { nametagPathOf } from '../../src/transcript/writer-lock.ts';
import { abandonSession } from '../support/abandon-session.ts';
import { startSessionWorker } from '../support/session-workers.ts';
import { makeTempFolder, removeFolder, sessionMeta, textMessage } from '../support/transcripts.ts';

/*
 * Attacks on a transcript's ownership and on the files a session writes, by a process of the
 * same user, on real files. Each first proves its fault happened (the nametag really was
 * deleted, the link existed when the write ran, the file really was swapped), then checks the
 * defence: no second writer, no byte through a link, no write outside the tree.
 */

async function withFolder(run: (folder: string) => Promise<void>): Promise<void> {
  const folder = await makeTempFolder();
  try {
    await run(folder);
  } finally {
    await removeFolder(folder);
  }
}

function sessionError(code: string, pattern?: RegExp) {
  return (error: unknown) => {
    assert.ok(TranscriptError.isInstance(error), `not a TranscriptError: ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (pattern !== undefined) assert.match(error.message, pattern);
    return true;
  };
}

/** A file outside the run tree, which no attack may change. */
async function bystander(folder: string, name = 'outside.txt'): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, 'the bystander file: precious bytes\n', { mode: 0o600 });
  return path;
}

async function assertUnchanged(path: string): Promise<void> {
  assert.equal(await readFile(path, 'utf8'), 'the bystander file: precious bytes\n', path);
}

describe('a writer owns its transcript by identity', () => {
  test('deleting the nametag (or a stale .lock) of a live run lets no second writer in', async () => {
    await withFolder(async (folder) => {
      const path = join(folder, 'run.jsonl');
      const first = await Session.create(path, sessionMeta());
      await writeFile(`${path}.lock`, '{"pid":1}');
      await stat(nametagPathOf(path));
      await unlink(nametagPathOf(path));
      await unlink(`${path}.lock`);
      await assert.rejects(stat(nametagPathOf(path)), { code: 'ENOENT' }, 'nametag deleted');
      await assert.rejects(Session.open(path), sessionError('locked', /not yet named/));
      await first.appendDurable(textMessage('user', 'still the only writer'));
      await first.close();
      await (await Session.open(path)).close();
    });
  });

  test('a forged nametag naming nobody alive lets no second writer in', async () => {
    await withFolder(async (folder) => {
      const path = join(folder, 'run.jsonl');
      const first = await Session.create(path, sessionMeta());
      await unlink(nametagPathOf(path));
      await writeFile(nametagPathOf(path), '{"pid":999999999,"since":"then","host":null}');
      await assert.rejects(Session.open(path), sessionError('locked'));
      await first.close();
    });
  });

  test('the transcript renamed away and a copy put at its path: the writer stops at its next barrier, writes nothing into the copy, and a new writer owns the copy', async () => {
    await withFolder(async (folder) => {
      const path = join(folder, 'run.jsonl');
      const moved = join(folder, 'moved.jsonl');
      const writer = await Session.create(path, sessionMeta());
      await writer.appendDurable(textMessage('user', 'before the swap'));
      await rename(path, moved);
      await writeFile(path, await readFile(moved), { mode: 0o600 });
      const copy = await readFile(path);
      assert.notEqual((await stat(path)).ino, (await stat(moved)).ino, 'the file was swapped');
      const late = writer.append(textMessage('assistant', 'WRITTEN-AFTER-THE-SWAP'));
      await assert.rejects(
        writer.barrier(),
        sessionError('ownership-lost', /replaced by another file.*renamed or moved away/),
      );
      await late;
      assert.equal(writer.poisoned, true);
      assert.throws(
        () => writer.append(textMessage('user', 'more')),
        sessionError('ownership-lost'),
      );
      // The bytes written after the swap went to the file the writer holds, never to the copy.
      assert.ok((await readFile(moved, 'utf8')).includes('WRITTEN-AFTER-THE-SWAP'));
      assert.ok((await readFile(path)).equals(copy), 'the copy at the path was written to');
      const second = await Session.open(path);
      await writer.close();
      assert.ok((await readFile(path)).equals(copy), "the first writer's close wrote to the copy");
      await stat(nametagPathOf(path)); // the first writer's close left the new writer's nametag
      await second.appendDurable(textMessage('user', 'the new owner'));
      await second.close();
      const text = await readFile(path, 'utf8');
      assert.ok(text.startsWith(copy.toString('utf8')) && text.includes('the new owner'));
      assert.ok(!text.includes('WRITTEN-AFTER-THE-SWAP'));
    });
  });

  test('the transcript deleted under a live writer: the writer stops at its next barrier', async () => {
    await withFolder(async (folder) => {
      const path = join(folder, 'run.jsonl');
      const writer = await Session.create(path, sessionMeta());
      await unlink(path);
      await assert.rejects(stat(path), { code: 'ENOENT' });
      // The append itself goes through the writer's own descriptor, to the deleted file's
      // inode, which no path names any more: it resolves, and reaches no file anyone can open.
      const appended = writer.append(textMessage('user', 'into the void'));
      await assert.rejects(writer.barrier(), sessionError('ownership-lost', /is gone.*deleted/));
      assert.equal((await appended).seq, 1);
      await assert.rejects(stat(path), { code: 'ENOENT' }, 'the append re-created nothing');
      await writer.close();
      assert.deepEqual(await readdir(folder), [], 'nothing re-created, the nametag removed');
    });
  });

  test('the transcript replaced by a symbolic link: the writer stops, nothing goes through the link', async () => {
    await withFolder(async (folder) => {
      const outside = await bystander(folder);
      const tree = join(folder, 'tree');
      const path = join(tree, 'run.jsonl');
      const writer = await Session.create(path, sessionMeta(), { durability: 'none' });
      const buffered = writer.append(textMessage('user', 'buffered until the barrier'));
      assert.equal((await buffered).seq, 1, 'buffered in memory: nothing written yet');
      await unlink(path);
      await symlink(outside, path);
      assert.ok((await lstat(path)).isSymbolicLink(), 'the link is in place');
      await assert.rejects(writer.barrier(), sessionError('ownership-lost', /symbolic link/));
      await writer.close();
      await assertUnchanged(outside);
      assert.ok((await lstat(path)).isSymbolicLink());
    });
  });

  test('a symbolic link given as the transcript path is refused, naming the fix', async () => {
    await withFolder(async (folder) => {
      const real = join(folder, 'real.jsonl');
      await (await Session.create(real, sessionMeta())).close();
      const before = await readFile(real);
      const link = join(folder, 'link.jsonl');
      await symlink(real, link);
      await assert.rejects(
        Session.open(link),
        sessionError('unreadable', /symbolic link.*pass the real path/),
      );
      await assert.rejects(Session.create(link, sessionMeta()), sessionError('exists'));
      assert.ok((await readFile(real)).equals(before));
      assert.deepEqual((await readdir(folder)).sort(), ['link.jsonl', 'real.jsonl']);
    });
  });

  test('a hard link to a live transcript is the same file: opening it is refused', async () => {
    await withFolder(async (folder) => {
      const path = join(folder, 'run.jsonl');
      const other = join(folder, 'other.jsonl');
      const writer = await Session.create(path, sessionMeta());
      await link(path, other);
      assert.equal((await stat(other)).ino, (await stat(path)).ino, 'the hard link exists');
      await assert.rejects(Session.open(other), sessionError('locked'));
      await writer.appendDurable(textMessage('user', 'still the only writer'));
      await writer.close();
    });
  });

  test('a transcript with another name (a hard link from outside the tree) is never written', async () => {
    await withFolder(async (folder) => {
      const path = join(folder, 'run.jsonl');
      const outside = join(folder, 'outside.jsonl');
      await (await Session.create(path, sessionMeta())).close();
      await link(path, outside);
      const before = await readFile(outside);
      assert.equal((await stat(path)).nlink, 2, 'the hard link exists');
      await assert.rejects(
        Session.open(path),
        sessionError('unreadable', /2 names \(hard links\)/),
      );
      assert.deepEqual(await readFile(outside), before, 'the other name is byte-identical');
      assert.deepEqual((await readdir(folder)).sort(), ['outside.jsonl', 'run.jsonl']);
    });
  });

  test('a folder named X.jsonl is refused as a folder, and left alone', async () => {
    await withFolder(async (folder) => {
      const path = join(folder, 'run.jsonl');
      await mkdir(path);
      await assert.rejects(Session.open(path), sessionError('unreadable', /is a folder/));
      await assert.rejects(Session.create(path, sessionMeta()), sessionError('exists'));
      assert.deepEqual(await readdir(path), []);
      assert.deepEqual(await readdir(folder), ['run.jsonl']);
    });
  });

  test('a FIFO at the transcript path is refused at once, never opened for a blocking read', async () => {
    await withFolder(async (folder) => {
      const path = join(folder, 'run.jsonl');
      const { execFileSync } = await import('node:child_process');
      execFileSync('mkfifo', [path]);
      assert.ok((await lstat(path)).isFIFO());
      await assert.rejects(Session.open(path), sessionError('unreadable', /not a regular file/));
    });
  });

  test('another process cannot open a transcript this one holds, nor this one what it holds — with or without a nametag', async () => {
    await withFolder(async (folder) => {
      const path = join(folder, 'run.jsonl');
      await (await Session.create(path, sessionMeta())).close();
      const worker = await startSessionWorker();
      try {
        const opened = await worker.send({ op: 'open', path });
        assert.equal(opened.ok, true);
        await assert.rejects(Session.open(path), (error: unknown) => {
          assert.ok(TranscriptError.isInstance(error) && error.code === 'locked');
          assert.equal(error.holder?.pid, worker.pid, 'the holder is named');
          return true;
        });
        await unlink(nametagPathOf(path));
        await assert.rejects(Session.open(path), sessionError('locked'));
        await worker.send({ op: 'close' });
        const mine = await Session.open(path);
        const refused = await worker.send({ op: 'open', path });
        assert.equal(refused.code, 'locked');
        assert.equal(refused.holderPid, process.pid);
        await mine.close();
      } finally {
        await worker.stop();
      }
    });
  });
});

describe('no redirection', () => {
  test('a symbolic link at the nametag path is replaced, never written through', async () => {
    await withFolder(async (folder) => {
      const outside = await bystander(folder);
      const path = join(folder, 'run.jsonl');
      await symlink(outside, nametagPathOf(path));
      const session = await Session.create(path, sessionMeta());
      const nametag = await lstat(nametagPathOf(path));
      assert.ok(nametag.isFile(), 'the link itself was replaced by the nametag');
      assert.equal(nametag.mode & 0o777, 0o600);
      await session.close();
      await assertUnchanged(outside);
    });
  });

  test('symbolic links at the sidecar names a repair could use are never written through', async () => {
    await withFolder(async (folder) => {
      const outside = await bystander(folder);
      const tree = join(folder, 'tree');
      const path = join(tree, 'run.jsonl');
      await (await Session.create(path, sessionMeta())).close();
      const valid = (await stat(path)).size;
      await writeFile(path, '{"v":1,"seq":1,"torn', { flag: 'a' });
      // Every name of a repair one can predict: the sidecar's, and the temporary name earlier
      // versions used (today's temporary name is random).
      const names = [`run.jsonl.torn-${valid}`, `run.jsonl.torn-${valid}.tmp`];
      for (const name of names) await symlink(outside, join(tree, name));
      const session = await Session.open(path);
      await session.close();
      await assertUnchanged(outside);
      for (const name of names) assert.ok((await lstat(join(tree, name))).isSymbolicLink(), name);
      const sidecar = join(tree, `run.jsonl.torn-${valid}-2`);
      assert.equal(await readFile(sidecar, 'utf8'), '{"v":1,"seq":1,"torn');
      assert.equal((await lstat(sidecar)).mode & 0o777, 0o600);
      const left = (await readdir(tree)).filter((name) => name.endsWith('.tmp'));
      assert.deepEqual(left, [`run.jsonl.torn-${valid}.tmp`], 'no temporary file left');
    });
  });

  test('X.agents as a symbolic link: a child is neither created nor revived through it', async () => {
    await withFolder(async (folder) => {
      const outside = join(folder, 'outside');
      await mkdir(outside);
      const tree = join(folder, 'tree');
      const root = join(tree, 'main.jsonl');
      await (await Session.create(root, sessionMeta())).close();
      // A revivable child transcript outside the tree, reached through main.agents.
      const target = join(outside, 'helper.jsonl');
      const child = await Session.create(target, sessionMeta('helper'));
      await child.appendDurable(textMessage('user', 'a task'));
      await abandonSession(child);
      const targetBytes = await readFile(target);
      await symlink(outside, join(tree, 'main.agents'));
      assert.ok((await lstat(join(tree, 'main.agents'))).isSymbolicLink());
      const childPath = join(tree, 'main.agents', 'helper.jsonl');
      assert.deepEqual(agentsFoldersOf(childPath), [join(tree, 'main.agents')]);

      const revived = await reviveTranscript({
        path: childPath,
        agentId: 'helper',
        maxRevivals: 3,
      });
      assert.equal(revived.ok, false);
      assert.match(revived.ok ? '' : revived.detail, /main\.agents is a symbolic link/);

      const created = await createChildSession({
        places: filePlaces({}),
        child: {
          agentId: 'other',
          agentType: 'helper',
          label: 'other',
          callId: 'call_1',
          sessionPath: join(tree, 'main.agents', 'other.jsonl'),
        },
        parentPath: root,
        model: 'test:model',
        task: 'a task',
      });
      assert.equal(created.ok, false);
      assert.match(created.ok || created.existing ? '' : created.detail, /symbolic link/);
      assert.ok((await readFile(target)).equals(targetBytes), 'the outside child was changed');
      assert.deepEqual((await readdir(outside)).sort(), ['helper.jsonl']);
    });
  });

  test('a deeper X.agents that is a file refuses too, naming the folder', async () => {
    await withFolder(async (folder) => {
      const tree = join(folder, 'tree');
      await mkdir(join(tree, 'main.agents'), { recursive: true });
      await writeFile(join(tree, 'main.agents', 'a.agents'), 'not a folder');
      const path = join(tree, 'main.agents', 'a.agents', 'b.jsonl');
      await assert.rejects(
        Session.create(path, sessionMeta('b'), { realFolders: agentsFoldersOf(path) }),
        sessionError('unreadable', /a\.agents is not a folder/),
      );
    });
  });

  test('under umask 000 files are still 0600 and folders 0700', async () => {
    await withFolder(async (folder) => {
      const previous = process.umask(0);
      try {
        assert.equal(process.umask(0), 0, 'the umask is 000');
        const path = join(folder, 'a', 'b.agents', 'run.jsonl');
        const session = await Session.create(path, sessionMeta(), {
          realFolders: agentsFoldersOf(path),
        });
        assert.equal((await stat(nametagPathOf(path))).mode & 0o777, 0o600, 'nametag');
        await session.close();
        assert.equal((await stat(path)).mode & 0o777, 0o600, 'transcript');
        for (const made of [join(folder, 'a'), join(folder, 'a', 'b.agents')]) {
          assert.equal((await stat(made)).mode & 0o777, 0o700, made);
        }
        await writeFile(path, '{"v":1,"seq":1,"ty', { flag: 'a', mode: 0o600 });
        await (await Session.open(path)).close();
        const sidecar = (await readdir(join(folder, 'a', 'b.agents'))).find((name) =>
          name.includes('.torn-'),
        );
        assert.ok(sidecar !== undefined);
        const mode = (await stat(join(folder, 'a', 'b.agents', sidecar))).mode;
        assert.equal(mode & 0o777, 0o600, 'sidecar');
      } finally {
        process.umask(previous);
      }
    });
  });
});

describe('a torn tail streams to its sidecar', () => {
  test('a 5 MiB torn tail is copied in reads of at most 1 MiB, byte for byte, and reused when found again', async () => {
    await withFolder(async (folder) => {
      const path = join(folder, 'run.jsonl');
      await (await Session.create(path, sessionMeta())).close();
      const valid = (await stat(path)).size;
      const torn = Buffer.alloc(5 * 1024 * 1024, 'x');
      torn.write('{"v":1,"seq":1,"type":"message","text":"', 0);
      await writeFile(path, torn, { flag: 'a' });
      let largest = 0;
      const measuring: FileSystem = {
        ...nodeFileSystem,
        read(fd, buffer, position) {
          largest = Math.max(largest, buffer.length);
          return nodeFileSystem.read(fd, buffer, position);
        },
      };
      const copy = await readFile(path);
      await (await Session.open(path, { fileSystem: measuring })).close();
      assert.ok(largest > 0 && largest <= 1024 * 1024, `a read of ${largest} bytes`);
      const sidecar = join(folder, `run.jsonl.torn-${valid}`);
      assert.ok((await readFile(sidecar)).equals(torn), 'the sidecar holds the torn bytes');
      // The same torn tail again (a repair whose truncation was lost): the sidecar is reused.
      await writeFile(path, copy);
      await (await Session.open(path, { fileSystem: measuring })).close();
      const sidecars = (await readdir(folder)).filter((name) => name.includes('.torn-'));
      assert.deepEqual(sidecars, [`run.jsonl.torn-${valid}`]);
      assert.ok(largest <= 1024 * 1024);
    });
  });
});
