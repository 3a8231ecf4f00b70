import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RecordBody, TranscriptRecord } from '../../src/transcript/records.ts';
import { causeOfStatus, legacyFailureHalt, needsPerson } from '../../src/transcript/run-halt.ts';
import {
  emptyTailState,
  foldTailState,
  tailStateFromJson,
  tailStateToJson,
} from '../../src/transcript/tail-state.ts';
import { validateRecord } from '../../src/transcript/validate-record.ts';

/*
 * What a transcript says about a run that failed or was stopped: the fold keeps the halt until
 * anything is written after it; an old version's failure turn is a halt, not an answer; an old
 * checkpoint that cannot tell the two apart is not trusted.
 */

let seq = 0;
function record(body: RecordBody): TranscriptRecord {
  const at = new Date(Date.UTC(2026, 0, 1, 9, 0, seq)).toISOString();
  const header = { v: 1, seq, at };
  seq += 1;
  return { ...header, ...body } as TranscriptRecord;
}

function fold(bodies: RecordBody[]) {
  seq = 0;
  let state = emptyTailState();
  for (const body of bodies) state = foldTailState(state, record(body), 100);
  return state;
}

const meta: RecordBody = {
  type: 'session-meta',
  agentId: 'main',
  agentType: 'main',
  label: 'main',
  model: 'test:model',
};
const user: RecordBody = { type: 'message', role: 'user', content: [{ type: 'text', text: 'Hi' }] };
const failed: RecordBody = {
  type: 'run-failed',
  cause: 'rate-limited',
  error: 'HTTP 429: slow down',
  backend: 1,
  model: 'openai.chat:gpt-5',
  attempts: 3,
  retryAfterMs: 2000,
};
const legacyTurn: RecordBody = {
  type: 'message',
  role: 'assistant',
  content: [
    {
      type: 'text',
      text: 'The run failed: every backend refused the request; last: backend 2 of 2: HTTP 401: bad key',
    },
  ],
  extras: {
    error: {
      kind: 'model-unavailable',
      detail: 'every backend refused the request; last: backend 2 of 2: HTTP 401: bad key',
      attempts: 2,
    },
  },
};

test('run-failed and run-stopped validate, and a bad field is named', () => {
  assert.equal(validateRecord(record(failed)).ok, true);
  assert.equal(validateRecord(record({ type: 'run-stopped', reason: 'SIGTERM' })).ok, true);
  const bad = validateRecord(record({ ...failed, cause: 'bored' } as unknown as RecordBody));
  assert.ok(!bad.ok);
  assert.equal(bad.problem.field, 'cause');
  const noReason = validateRecord(record({ type: 'run-stopped' } as unknown as RecordBody));
  assert.ok(!noReason.ok);
  assert.equal(noReason.problem.field, 'reason');
});

test('the fold keeps a halt until a message or a revival follows it', () => {
  const state = fold([meta, user, failed]);
  assert.deepEqual(state.halt, {
    state: 'failed',
    seq: 2,
    at: '2026-01-01T09:00:02.000Z',
    detail: 'HTTP 429: slow down',
    cause: 'rate-limited',
    model: 'openai.chat:gpt-5',
    retryAfterMs: 2000,
  });
  assert.equal(state.lastMessage?.role, 'user');
  assert.equal(fold([meta, user, failed, user]).halt, null);
  const revived: RecordBody = {
    type: 'run-revived',
    ordinal: 1,
    maxRevivals: 2,
    afterSeq: 2,
    interrupted: [],
    completedUnpersisted: [],
    orphaned: [],
  };
  assert.equal(fold([meta, user, failed, revived]).halt, null);
  const stopped = fold([meta, user, { type: 'run-stopped', reason: 'SIGINT: interrupted' }]);
  assert.equal(stopped.halt?.state, 'stopped');
  assert.equal(stopped.halt?.detail, 'SIGINT: interrupted');
});

test("an old version's failure turn is a halt, not the run's last answer", () => {
  const state = fold([meta, user, legacyTurn]);
  assert.equal(state.lastMessage?.role, 'user', 'the failure turn is not the last message');
  assert.equal(state.conversationMessages, 1);
  assert.equal(state.halt?.state, 'failed');
  assert.equal(state.halt?.cause, 'auth');
  seq = 0;
  const answer: RecordBody = {
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text: 'The run failed: just kidding' }],
  };
  assert.equal(legacyFailureHalt(record(answer) as never), null, 'a model may say anything');
});

test('a checkpoint without halt whose last message is an assistant turn without calls is not trusted', () => {
  const finishedOld = tailStateToJson(
    fold([
      meta,
      user,
      { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Done' }] },
    ]),
  );
  delete finishedOld.halt;
  assert.equal(tailStateFromJson(finishedOld), null);
  const midRunOld = tailStateToJson(fold([meta, user]));
  delete midRunOld.halt;
  assert.equal(tailStateFromJson(midRunOld)?.halt, null);
  const current = tailStateToJson(fold([meta, user, failed]));
  assert.equal(tailStateFromJson(current)?.halt?.state, 'failed');
});

test('causes and whether a person is needed', () => {
  assert.deepEqual([401, 403, 429, 408, 500, 503, 400, 404, 413, 422].map(causeOfStatus), [
    'auth',
    'auth',
    'rate-limited',
    'outage',
    'outage',
    'outage',
    'refused',
    'refused',
    'refused',
    'refused',
  ]);
  assert.deepEqual((['outage', 'rate-limited', 'auth', 'refused'] as const).map(needsPerson), [
    false,
    false,
    true,
    true,
  ]);
});
