import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Revival } from '../../src/revival/index.ts';
import { nodeFileSystem } from '../../src/transcript/file-system.ts';
import { encodeLine } from '../../src/transcript/line-codec.ts';
import { Session } from '../../src/transcript/session.ts';
import { FaultyFileSystem } from '../../src/testing/index.ts';
import { freshPaths, tempFolder } from './support/temp-folder.ts';
import {
  assistant,
  inFlightCall,
  META,
  parallelBatch,
  result,
  settle,
  user,
  writeTranscript,
} from './support/transcripts.ts';

const folder = await tempFolder();
const fresh = freshPaths(folder);
const inFlight = inFlightCall();

/** Inspect through a recording file system and fail on any call that could change a file. */
async function inspectWritingNothing(path: string, maxRevivals = 2) {
  const fileSystem = new FaultyFileSystem(nodeFileSystem);
  const listing = await readdir(folder);
  const found = await Revival.inspect({ path, maxRevivals, fileSystem });
  const mutating = fileSystem.calls.filter(
    (entry) =>
      (entry.operation === 'open' && entry.mode !== 'read') ||
      ['write', 'sync', 'truncate', 'rename', 'syncFolder', 'makeFolder', 'tryLock'].includes(
        entry.operation,
      ),
  );
  assert.deepEqual(mutating, [], 'inspect made a call that can change a file');
  assert.deepEqual(await readdir(folder), listing, 'inspect created or removed a file');
  return found;
}

describe('inspect: "Is there anything to revive here? Reads the file, writes nothing."', () => {
  test('a revivable transcript is read with read-only calls, and no file is created (not even a lock file)', async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    const bytes = await readFile(path);
    const found = await inspectWritingNothing(path);
    assert.equal(found.revivable, true);
    assert.deepEqual(await readFile(path), bytes);
  });

  test('it answers revivals used, the tail state, the open dispatches, never-dispatched calls and pending joins, and who the run is', async () => {
    const path = fresh();
    await writeTranscript(path, parallelBatch(), {
      meta: { ...META, parent: { transcript: '../parent.jsonl', callId: 'spawn-7' } },
    });
    const found = await inspectWritingNothing(path, 2);
    assert.equal(found.revivable, true);
    assert.equal(found.reason, undefined);
    assert.equal(found.tail, 'calls-unanswered');
    assert.equal(found.revivalsUsed, 0);
    assert.equal(found.maxRevivals, 2);
    assert.deepEqual(
      found.openDispatches.map((open) => [open.callId, open.resultSeq !== undefined]),
      [
        ['unpersisted', true],
        ['inFlight', false],
        ['join', false],
      ],
    );
    assert.deepEqual(found.neverDispatched, [{ callId: 'later', toolName: 'read_file' }]);
    assert.deepEqual(found.pendingJoins, [{ callId: 'join', agentIds: ['child-1'] }]);
    assert.equal(found.agentId, META.agentId);
    assert.equal(found.agentType, META.agentType);
    assert.equal(found.label, META.label);
    assert.deepEqual(found.parent, { transcript: '../parent.jsonl', callId: 'spawn-7' });
    assert.equal(found.bytes, (await readFile(path)).length);
    assert.equal(found.messages, 4);
    assert.ok(found.estimatedTokens > 0 && found.estimatedTokens < found.bytes / 4);
  });

  test('the tail says which of the three interrupted states the run is in', async () => {
    for (const [bodies, tail] of [
      [inFlight, 'calls-unanswered'],
      [[...inFlight, result('c1'), settle('c1')], 'results-unread'],
      [[user('Hi')], 'user-turn'],
      [[...inFlight, result('c1'), settle('c1'), user('and another thing')], 'user-turn'],
    ] as const) {
      const path = fresh();
      await writeTranscript(path, [...bodies]);
      assert.equal((await inspectWritingNothing(path)).tail, tail);
    }
  });
});

describe('inspect: the reasons, in the order they are decided', () => {
  test('unreadable: a missing file, a folder, binary junk, damage mid-file (naming the line), a newer version', async () => {
    const junk = fresh();
    await writeFile(junk, Buffer.from([0xff, 0xfe, 0x00, 0x41, 0x0a, 0x42]));
    const damaged = fresh();
    await writeTranscript(damaged, inFlight);
    const lines = (await readFile(damaged, 'utf8')).split('\n');
    lines[2] = lines[2]?.replace('"assistant"', '"assistanT"') ?? '';
    await writeFile(damaged, lines.join('\n'));
    const newer = fresh();
    const future = encodeLine(
      { v: 1, seq: 0, at: '2026-01-01T00:00:00.000Z' },
      { type: 'session-meta', ...META },
    );
    await writeFile(newer, future.bytes.toString().replace('{"v":1,', '{"v":9,'));
    const aFolder = join(folder, 'a-folder.jsonl');
    await mkdir(aFolder);
    for (const [path, pattern] of [
      [join(folder, 'nope.jsonl'), /no such file/],
      [aFolder, /folder/],
      [junk, /not a transcript/],
      [damaged, new RegExp(`${damaged.replaceAll('.', '\\.')}:3: `)],
      [newer, /:1: .*newer|checksum/],
    ] as const) {
      const found = await inspectWritingNothing(path);
      assert.equal(found.revivable, false, path);
      assert.equal(found.reason, 'unreadable', path);
      assert.match(found.detail ?? '', pattern);
    }
  });

  test('an empty file is empty: a transcript whose creation died before its first line', async () => {
    const path = fresh();
    await writeFile(path, '');
    const found = await inspectWritingNothing(path);
    assert.equal(found.reason, 'empty');
  });

  test('running: a live process holds the writer lock — and it comes before finished', async () => {
    const path = fresh();
    await writeTranscript(path, [user('Hi'), assistant('Hello!')]);
    const session = await Session.open(path);
    try {
      const found = await inspectWritingNothing(path);
      assert.equal(found.reason, 'running');
      assert.match(found.detail ?? '', new RegExp(`pid ${process.pid}`));
    } finally {
      await session.close();
    }
    assert.equal((await inspectWritingNothing(path)).reason, 'finished');
  });

  test('finished comes before revival-cap, revival-cap before empty', async () => {
    const finished = fresh();
    await writeTranscript(finished, [user('Hi'), assistant('Hello!')]);
    assert.equal((await inspectWritingNothing(finished, 0)).reason, 'finished');
    const metaOnly = fresh();
    await writeTranscript(metaOnly, []);
    assert.equal((await inspectWritingNothing(metaOnly, 0)).reason, 'revival-cap');
    assert.equal((await inspectWritingNothing(metaOnly, 1)).reason, 'empty');
  });

  test('a cap that is not a non-negative integer is treated as 0, and said so, rather than thrown', async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    const found = await inspectWritingNothing(path, -1);
    assert.equal(found.reason, 'revival-cap');
    assert.match(found.detail ?? '', /non-negative integer/);
  });
});

describe('inspect: "reading somebody else\'s file, possibly while it is still being written"', () => {
  test('a transcript being appended to right now is inspected without an error and without disturbing the writer', async () => {
    const path = fresh();
    await writeTranscript(path, [user('Hi')]);
    const session = await Session.open(path, { durability: 'flush', checkpointBytes: 2048 });
    let writing = true;
    const writer = (async () => {
      let index = 0;
      while (writing) {
        await session.append(user(`line ${index++} ${'x'.repeat(index % 300)}`));
      }
    })();
    const reasons = new Set<string>();
    for (let round = 0; round < 60; round++) {
      const found = await Revival.inspect({ path, maxRevivals: 1 });
      reasons.add(found.reason ?? 'revivable');
      await new Promise((resolve) => setImmediate(resolve));
    }
    writing = false;
    await writer;
    await session.close();
    assert.deepEqual([...reasons], ['running']);
    assert.equal((await Revival.inspect({ path, maxRevivals: 1 })).tail, 'user-turn');
  });

  test("a crash's torn tail is read past, not repaired: the file is left as it is", async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    const torn = Buffer.concat([await readFile(path), Buffer.from('{"v":1,"seq":4,"type":"mess')]);
    await writeFile(path, torn);
    const found = await inspectWritingNothing(path);
    assert.equal(found.revivable, true);
    assert.equal(found.tail, 'calls-unanswered');
    assert.equal(found.bytes, torn.length);
    assert.deepEqual(await readFile(path), torn);
  });
});
