import assert from 'node:assert/strict';
import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Revival } from '../../src/revival/index.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { peek } from '../../src/transcript/peek.ts';
import { tailStateFromJson } from '../../src/transcript/tail-state.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';

/*
 * test/fixtures/v1/compacted.jsonl (format 0.3: a checkpoint state's `compacted`), and what a
 * checkpoint written before 0.3 means for the same field.
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/v1/', import.meta.url));

test('compacted.jsonl: its checkpoints carry the ranges its compactions removed', async () => {
  const read = await peek(join(FIXTURES, 'compacted.jsonl'));
  assert.ok(read.ok && read.state === 'clean');
  const checkpoints = read.records.filter((record) => record.type === 'checkpoint');
  const last = checkpoints.at(-1) as { state: Parameters<typeof tailStateFromJson>[0] };
  assert.deepEqual(tailStateFromJson(last.state)?.compacted, [
    [1, 16],
    [19, 36],
  ]);
});

test('compacted.jsonl (a copy): revived from its last checkpoint, with the conversation of a full read', async () => {
  const folder = await makeTempFolder();
  try {
    const path = join(folder, 'compacted.jsonl');
    await copyFile(join(FIXTURES, 'compacted.jsonl'), path);
    const before = await peek(path);
    assert.ok(before.ok);
    const revived = await Revival.revive({ path, agentId: 'main', maxRevivals: 2 });
    assert.ok(revived.ok, revived.ok ? '' : revived.detail);
    assert.equal(revived.session.openedFromCheckpoint, 54);
    assert.deepEqual(revived.interrupted, ['send-1']);
    await revived.session.close();
    const after = await peek(path);
    assert.ok(after.ok);
    assert.deepEqual(revived.messages, conversationView(after.records));
    // What the model sees: the second summary (its range took the first compaction with it),
    // the turns after it, and the interrupted answer.
    const summaries = revived.messages.filter(
      (message) => message.extras?.injected === 'compaction',
    );
    assert.equal(summaries.length, 1);
    assert.match(JSON.stringify(summaries[0]?.content), /Summary 2/);
    const original = await readFile(join(FIXTURES, 'compacted.jsonl'));
    assert.ok(
      (await readFile(path)).subarray(0, original.length).equals(original),
      'only appended to',
    );
  } finally {
    await removeFolder(folder);
  }
});

test('a checkpoint written before 0.3 has no `compacted`: unknown, so a revive reads every record', async () => {
  const read = await peek(join(FIXTURES, 'normal.jsonl'));
  assert.ok(read.ok);
  const checkpoint = read.records.find((record) => record.type === 'checkpoint') as {
    state: Parameters<typeof tailStateFromJson>[0];
  };
  assert.equal(tailStateFromJson(checkpoint.state)?.compacted, null);
});

test('a checkpoint whose `compacted` reaches past itself is not believed: unknown, so a revive reads every record', async () => {
  const read = await peek(join(FIXTURES, 'compacted.jsonl'));
  assert.ok(read.ok);
  const last = read.records.filter((record) => record.type === 'checkpoint').at(-1) as {
    state: Parameters<typeof tailStateFromJson>[0];
  };
  const state = tailStateFromJson(last.state);
  assert.ok(state !== null && state.compacted !== null);
  const reaching = { ...last.state, compacted: [[1, state.lastSeq + 2]] };
  assert.equal(tailStateFromJson(reaching as typeof last.state)?.compacted, null);
  const within = { ...last.state, compacted: [[1, state.lastSeq]] };
  assert.deepEqual(tailStateFromJson(within as typeof last.state)?.compacted, [[1, state.lastSeq]]);
});
