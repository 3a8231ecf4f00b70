import assert from 'node:assert/strict';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Loop } from '../../src/loop/loop.ts';
import { Revival } from '../../src/revival/index.ts';
import { INTERRUPTED_MESSAGE, RESUME_NOTICE } from '../../src/revival/texts.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { peek } from '../../src/transcript/peek.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';

/*
 * The frozen fixtures of runs that failed or were stopped (test/fixtures/v1/README.md), read by
 * this version: each is failed or stopped and revivable, and revives to a run that never sees a
 * word it did not write — including legacy-failed.jsonl, written by a version that ended a
 * failed run with an assistant turn of its own and a checkpoint that cannot tell that turn from
 * an answer.
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/v1/', import.meta.url));

/** Revive a copy of `name`, run it on a model that answers once, and return what it was sent. */
async function reviveCopy(name: string): Promise<{ prompt: string; records: string[] }> {
  const folder = await makeTempFolder();
  try {
    const path = join(folder, name);
    await copyFile(join(FIXTURES, name), path);
    const revived = await Revival.revive({ path, agentId: 'main', maxRevivals: 2 });
    assert.ok(revived.ok, JSON.stringify(revived));
    const model = new ScriptedModel([{ text: 'Carrying on.' }]);
    try {
      const result = await new Loop({ backends: [model.model], writer: revived.session }).run(
        revived.messages,
      );
      assert.equal(result.status, 'finished', JSON.stringify(result));
    } finally {
      await revived.session.close();
    }
    assert.deepEqual(model.violations, [], 'the revived conversation keeps the pairing rules');
    const read = await peek(path);
    assert.ok(read.ok);
    return {
      prompt: JSON.stringify(model.prompts[0]),
      records: read.records.map((record) => record.type),
    };
  } finally {
    await removeFolder(folder);
  }
}

test('failed.jsonl: failed (an outage, on the second backend), revivable, and revived honestly', async () => {
  const found = await Revival.inspect({ path: join(FIXTURES, 'failed.jsonl'), maxRevivals: 2 });
  assert.equal(found.revivable, true, JSON.stringify(found));
  assert.equal(found.tail, 'results-unread');
  assert.deepEqual(found.halt, {
    state: 'failed',
    seq: 6,
    at: '2026-02-01T09:00:07.000Z',
    detail: 'HTTP 500: scripted HTTP 500',
    cause: 'outage',
    model: 'fallback:fallback',
  });
  const revived = await reviveCopy('failed.jsonl');
  assert.ok(revived.prompt.includes(RESUME_NOTICE.slice(0, 40)));
  assert.doesNotMatch(revived.prompt, /The run failed/);
  assert.ok(revived.records.includes('run-revived'));
});

test('stopped.jsonl: stopped by SIGTERM with its deploy in flight; a revival answers it as interrupted, never runs it', async () => {
  const found = await Revival.inspect({ path: join(FIXTURES, 'stopped.jsonl'), maxRevivals: 2 });
  assert.equal(found.revivable, true, JSON.stringify(found));
  assert.equal(found.halt?.state, 'stopped');
  assert.equal(found.halt?.detail, 'SIGTERM: terminated');
  assert.deepEqual(
    found.openDispatches.map((call) => [call.callId, call.toolName]),
    [['call-1', 'deploy']],
  );
  const revived = await reviveCopy('stopped.jsonl');
  assert.ok(revived.prompt.includes(JSON.stringify(INTERRUPTED_MESSAGE).slice(1, 60)));
});

test('legacy-failed.jsonl: the old failure turn reads as failed, not finished, and no model is shown it', async () => {
  const path = join(FIXTURES, 'legacy-failed.jsonl');
  const read = await peek(path);
  assert.ok(read.ok);
  // The fault this test is about is really in the file: an assistant turn the system wrote,
  // and a checkpoint after it whose last message is that turn, with no `halt` member.
  const records = read.records.filter(isKnownRecord);
  const turn = records.find(
    (record) => record.type === 'message' && record.role === 'assistant' && record.seq === 6,
  );
  assert.ok(turn?.type === 'message');
  assert.match(turn.content[0]?.type === 'text' ? turn.content[0].text : '', /^The run failed: /);
  const checkpoint = records.at(-1);
  assert.ok(checkpoint?.type === 'checkpoint');
  assert.equal('halt' in checkpoint.state, false);
  assert.deepEqual(checkpoint.state.lastMessage, { seq: 6, role: 'assistant', calls: [] });

  const found = await Revival.inspect({ path, maxRevivals: 2 });
  assert.equal(found.revivable, true, JSON.stringify(found));
  assert.equal(found.halt?.state, 'failed');
  assert.equal(found.halt?.cause, 'outage');
  assert.match(found.halt?.detail ?? '', /every backend failed after 4 attempts/);
  assert.equal(found.tail, 'results-unread');

  const view = conversationView(read.records);
  assert.deepEqual(
    view.map((message) => message.role),
    ['user', 'assistant', 'tool'],
  );
  const revived = await reviveCopy('legacy-failed.jsonl');
  assert.doesNotMatch(revived.prompt, /The run failed/);
  assert.ok(revived.prompt.includes(RESUME_NOTICE.slice(0, 40)));
});
