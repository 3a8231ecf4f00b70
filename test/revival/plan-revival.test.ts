import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isRevivalWrite, planRevival } from '../../src/revival/plan-revival.ts';
import { RunTail } from '../../src/revival/run-tail.ts';
import { RESUME_NOTICE } from '../../src/revival/texts.ts';
import { ConversationViewBuilder } from '../../src/transcript/conversation-view-builder.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import type { ForeignRecord, RecordBody, TranscriptRecord } from '../../src/transcript/records.ts';
import { emptyTailState, foldTailState, type TailState } from '../../src/transcript/tail-state.ts';
import { assistant, call, dispatch, META, result, settle, user } from './support/transcripts.ts';

const seed = Number(process.env.SEED ?? Date.now());
console.log('seed', seed);

type AnyRecord = TranscriptRecord | ForeignRecord;

function recordsFrom(bodies: readonly RecordBody[]): AnyRecord[] {
  return bodies.map(
    (body, seq) => ({ v: 1, seq, at: '2026-12-02T08:00:00.000Z', ...body }) as TranscriptRecord,
  );
}

function stateOf(records: readonly AnyRecord[]): TailState {
  return records.reduce((state, record) => foldTailState(state, record, 100), emptyTailState());
}

/** The plan from the whole file, as revive computed it before it streamed. */
function planFromAll(records: readonly AnyRecord[], maxRevivals = 3) {
  return planRevival({
    records,
    lastMessage: conversationView(records).at(-1),
    state: stateOf(records),
    maxRevivals,
  });
}

/** The plan from what a streaming pass keeps. */
function planFromStream(records: readonly AnyRecord[], maxRevivals = 3) {
  const tail = new RunTail();
  const view = new ConversationViewBuilder();
  let state = emptyTailState();
  for (const record of records) {
    tail.add(record);
    view.add(record);
    state = foldTailState(state, record, 100);
  }
  const plan = planRevival({
    records: tail.records,
    lastMessage: view.view().at(-1),
    state,
    maxRevivals,
  });
  return { plan, kept: tail.records };
}

const interruptedAnswer = (callId: string): RecordBody => ({
  type: 'message',
  role: 'tool',
  content: [{ type: 'tool-result', callId, toolName: 'write_file', output: 'x', isError: true }],
  extras: { injected: 'revival' },
});
const notice: RecordBody = {
  type: 'message',
  role: 'user',
  content: [{ type: 'text', text: RESUME_NOTICE }],
  extras: { injected: 'revival' },
};

test('a half-done revive: afterSeq names the run record, the lists carry what it settled', () => {
  const records = recordsFrom([
    { type: 'session-meta', ...META },
    user('Write a.txt and b.txt'), // 1
    assistant('', [call('a'), call('b'), call('c')]), // 2
    dispatch('a'), // 3
    dispatch('b'), // 4
    dispatch('c'), // 5: the run's last record
    interruptedAnswer('a'), // 6: the first revive's writes …
    interruptedAnswer('b'), // 7
    { type: 'checkpoint', state: {} }, // 8
    { type: 'tool-settled', callId: 'a', status: 'failed', reason: 'interrupted' }, // 9
    // … and it died here.
  ]);
  const { plan, kept } = planFromStream(records, 2);
  assert.deepEqual(
    kept.map((record) => record.seq),
    [5, 6, 7, 8, 9],
  );
  assert.deepEqual(plan, planFromAll(records, 2));
  assert.equal(plan.envelope.afterSeq, 5);
  assert.deepEqual(plan.envelope.interrupted, ['a', 'b', 'c']);
  assert.deepEqual(
    plan.interruptedMessages.map((message) =>
      message.content.map((part) => part.type === 'tool-result' && part.callId),
    ),
    [['c']],
    'b already has its interrupted answer: only c gets one',
  );
  assert.deepEqual(
    plan.settles.map((item) => [item.callId, item.reason]),
    [
      ['b', 'interrupted'],
      ['c', 'interrupted'],
    ],
  );
  assert.notEqual(plan.notice, null);
});

test('the notice is not planned when the conversation view already ends with it', () => {
  const records = recordsFrom([
    user('Write a.txt'),
    assistant('', [call('a')]),
    dispatch('a'),
    interruptedAnswer('a'),
    { type: 'tool-settled', callId: 'a', status: 'failed', reason: 'interrupted' },
    notice,
  ]);
  const { plan } = planFromStream(records);
  assert.equal(plan.notice, null);
  assert.equal(plan.envelope.afterSeq, 2);
  // Without the view's last message the planner cannot know: it is part of the input.
  const blind = planRevival({
    records,
    lastMessage: undefined,
    state: stateOf(records),
    maxRevivals: 3,
  });
  assert.notEqual(blind.notice, null);
});

type Step =
  | { kind: 'user' | 'notice' | 'checkpoint' | 'revived' | 'assistant-text' }
  | { kind: 'assistant'; calls: number }
  | { kind: 'dispatch' | 'answer' | 'revival-answer' | 'settle' | 'revival-settle'; pick: number }
  | { kind: 'compaction'; back: number; span: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constantFrom<'user' | 'notice' | 'checkpoint' | 'revived' | 'assistant-text'>(
      'user',
      'notice',
      'checkpoint',
      'revived',
      'assistant-text',
    ),
  }),
  fc.record({ kind: fc.constant('assistant' as const), calls: fc.integer({ min: 1, max: 3 }) }),
  fc.record({
    kind: fc.constantFrom<'dispatch' | 'answer' | 'revival-answer' | 'settle' | 'revival-settle'>(
      'dispatch',
      'dispatch',
      'answer',
      'revival-answer',
      'settle',
      'revival-settle',
    ),
    pick: fc.nat(),
  }),
  fc.record({ kind: fc.constant('compaction' as const), back: fc.nat(12), span: fc.nat(10) }),
);

/** What a revive writes (and checkpoints). */
const halfRevive: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constantFrom<'notice' | 'checkpoint'>('notice', 'checkpoint') }),
  fc.record({
    kind: fc.constantFrom<'revival-answer' | 'revival-settle'>('revival-answer', 'revival-settle'),
    pick: fc.nat(),
  }),
);

function bodiesOf(steps: readonly Step[]): RecordBody[] {
  const bodies: RecordBody[] = [{ type: 'session-meta', ...META }];
  const asked: string[] = [];
  const pick = (index: number) => asked[index % asked.length] ?? 'none';
  for (const item of steps) {
    switch (item.kind) {
      case 'user':
        bodies.push(user('go on'));
        break;
      case 'notice':
        bodies.push(notice);
        break;
      case 'checkpoint':
        bodies.push({ type: 'checkpoint', state: {} });
        break;
      case 'revived':
        bodies.push({
          type: 'run-revived',
          ordinal: 1,
          maxRevivals: 3,
          afterSeq: bodies.length - 1,
          interrupted: [],
          completedUnpersisted: [],
          orphaned: [],
        });
        break;
      case 'assistant-text':
        bodies.push(assistant('thinking'));
        break;
      case 'assistant': {
        const ids = Array.from({ length: item.calls }, (_, index) => `c${asked.length + index}`);
        asked.push(...ids);
        bodies.push(
          assistant(
            '',
            ids.map((id) => call(id)),
          ),
        );
        break;
      }
      case 'dispatch':
        if (asked.length > 0) bodies.push(dispatch(pick(item.pick)));
        break;
      case 'answer':
        if (asked.length > 0) bodies.push(result(pick(item.pick)));
        break;
      case 'revival-answer':
        if (asked.length > 0) bodies.push(interruptedAnswer(pick(item.pick)));
        break;
      case 'settle':
        if (asked.length > 0) bodies.push(settle(pick(item.pick)));
        break;
      case 'revival-settle':
        if (asked.length > 0) {
          const reasons = ['interrupted', 'completed-unpersisted', 'orphaned'];
          bodies.push({
            type: 'tool-settled',
            callId: pick(item.pick),
            status: item.pick % 2 === 0 ? 'failed' : 'outcome-unknown',
            reason: reasons[item.pick % 3] ?? 'interrupted',
          });
        }
        break;
      case 'compaction': {
        const fromSeq = Math.max(1, bodies.length - item.back);
        bodies.push({
          type: 'compaction',
          fromSeq,
          toSeq: Math.min(bodies.length - 1, fromSeq + item.span),
          summary: 'earlier',
        });
        break;
      }
    }
  }
  return bodies;
}

test('the plan from what a streaming pass keeps is the plan from every record', () => {
  const seen = { afterRevivalWrites: 0, listsCarried: 0, noticeSkipped: 0, compacted: 0 };
  fc.assert(
    fc.property(
      fc.array(step, { maxLength: 50 }),
      fc.array(halfRevive, { maxLength: 4 }),
      (steps, end) => {
        // The end of a revive killed half-way is what the planner must read back.
        const records = recordsFrom(bodiesOf([...steps, ...end]));
        const { plan, kept } = planFromStream(records);
        assert.deepEqual(plan, planFromAll(records));
        // What is kept: the run's last record, then only revival writes and checkpoints.
        const [first, ...rest] = kept;
        assert.ok(first !== undefined && !isRevivalWrite(first));
        assert.ok(rest.every(isRevivalWrite));
        if (rest.length > 0) seen.afterRevivalWrites += 1;
        const { interrupted, completedUnpersisted, orphaned } = plan.envelope;
        if (
          interrupted.length + completedUnpersisted.length + orphaned.length >
          plan.settles.length
        ) {
          seen.listsCarried += 1;
        }
        if (plan.notice === null) seen.noticeSkipped += 1;
        if (records.some((record) => record.type === 'compaction')) seen.compacted += 1;
      },
    ),
    { seed, numRuns: 300 },
  );
  for (const [name, count] of Object.entries(seen)) assert.ok(count > 10, `only ${count} ${name}`);
});
