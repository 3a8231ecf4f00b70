import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Revival } from '../../src/revival/index.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import type { OpenMode } from '../../src/transcript/file-system.ts';
import { Session } from '../../src/transcript/session.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import {
  assistant,
  call,
  dispatch,
  fixedClock,
  META,
  recordsOf,
  result,
  settle,
  user,
} from './support/transcripts.ts';

/*
 * revive of a run that compacted reads its end (from the last checkpoint) and the records no
 * compaction removed, keeping only where the conversation view's lines lie and the run's last
 * records — never every record — and then reads back just those lines. Its memory is the
 * bench's to measure (bench/revival-child.mjs); here: the bytes it reads, and that what it
 * hands back is still the view of the whole transcript.
 */

const PATH = '/runs/long.jsonl';

/** Counts the bytes read from each path. */
class CountingFileSystem extends MemoryFileSystem {
  readonly bytesRead = new Map<string, number>();
  readonly #paths = new Map<number, string>();

  override async open(path: string, mode: OpenMode): Promise<number> {
    const fd = await super.open(path, mode);
    this.#paths.set(fd, path);
    return fd;
  }

  override async read(fd: number, buffer: Uint8Array, position: number): Promise<number> {
    const count = await super.read(fd, buffer, position);
    const path = this.#paths.get(fd) ?? '?';
    this.bytesRead.set(path, (this.bytesRead.get(path) ?? 0) + count);
    return count;
  }
}

/**
 * A long run compacted the way the Loop does (a summary replacing everything from the first
 * user turn up to the turn before the last), that died with a call in flight. Written through
 * a Session, so it has the writer's checkpoints (which take seqs of their own).
 */
async function setUp(): Promise<{ fileSystem: CountingFileSystem; size: number }> {
  const fileSystem = new CountingFileSystem();
  const session = await Session.create(PATH, META, {
    fileSystem,
    durability: 'none',
    clock: fixedClock(),
  });
  const first = await session.append(user('Tidy every module of the repository'));
  const padding = 'the module was read and its tests pass; '.repeat(60);
  for (let turn = 0; turn < 500; turn += 1) {
    const callId = `call_${turn}`;
    const turnStart = session.lastSeq + 1;
    await session.append(
      assistant(`Reading module ${turn}`, [call(callId, 'read_file', { turn })]),
    );
    await session.append(dispatch(callId, 'read_file'));
    await session.append(result(callId, 'read_file', `${turn}: ${padding}`));
    await session.append(settle(callId));
    if (turn % 25 === 24) {
      await session.append({
        type: 'compaction',
        fromSeq: first.seq,
        toSeq: turnStart - 1,
        summary: `S${turn}`,
      });
    }
  }
  await session.append(assistant('Now the last one', [call('last', 'write_file')]));
  await session.append(dispatch('last'));
  await session.close();
  const fd = await fileSystem.open(PATH, 'read');
  const size = await fileSystem.size(fd);
  await fileSystem.close(fd);
  fileSystem.bytesRead.clear();
  return { fileSystem, size };
}

test("revive by path of a run that compacted reads its end and the view's lines, not what compactions removed", async () => {
  const { fileSystem, size } = await setUp();
  assert.ok(size > 1024 * 1024, `the transcript is ${size} bytes`);
  const revived = await Revival.revive({
    path: PATH,
    agentId: META.agentId,
    maxRevivals: 2,
    fileSystem,
    clock: fixedClock(),
  });
  assert.ok(revived.ok);
  await revived.session.close();
  const read = fileSystem.bytesRead.get(PATH) ?? 0;
  // inspect's window, the open from the last checkpoint, the records no compaction removed
  // (found by bisecting) and the view's lines read back: a small part of the file.
  assert.ok(read > 0);
  assert.ok(read < size / 4, `read ${read} bytes of a ${size}-byte transcript`);
});

test('what revive hands back is the view of the whole transcript, by path and by session', async () => {
  const { fileSystem: byPath } = await setUp();
  const viaPath = await Revival.revive({
    path: PATH,
    agentId: META.agentId,
    maxRevivals: 2,
    fileSystem: byPath,
    clock: fixedClock(),
  });
  assert.ok(viaPath.ok);
  await viaPath.session.close();
  const whole = conversationView(await recordsOf(PATH, byPath));
  assert.deepEqual(viaPath.messages, whole);
  // The view survived compaction: the last summary, the kept turn, the dying turn, the notice.
  assert.equal(viaPath.messages[0]?.extras?.injected, 'compaction');
  assert.ok(viaPath.messages.length < 12, `${viaPath.messages.length} messages`);
  assert.equal(viaPath.messages.at(-1)?.extras?.injected, 'revival');

  const { fileSystem: bySession } = await setUp();
  const session = await Session.open(PATH, { fileSystem: bySession, durability: 'none' });
  try {
    const viaSession = await Revival.revive({
      session,
      agentId: META.agentId,
      maxRevivals: 2,
      fileSystem: bySession,
      clock: fixedClock(),
    });
    assert.ok(viaSession.ok);
    assert.deepEqual(viaSession.messages, conversationView(await recordsOf(PATH, bySession)));
    assert.deepEqual(
      viaSession.messages.map(({ seq: _seq, ...message }) => message),
      viaPath.messages.map(({ seq: _seq, ...message }) => message),
    );
  } finally {
    await session.close();
  }
});
