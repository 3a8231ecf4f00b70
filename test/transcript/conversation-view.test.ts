import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { pairingViolations } from '../../src/transcript/pairing-violations.ts';
import type { ForeignRecord } from '../../src/transcript/records.ts';
import {
  assistant,
  call,
  compaction,
  dispatched,
  records,
  result,
  settled,
  system,
  tool,
  user,
  withoutSeq,
} from './conversation-builders.ts';

const summaryOf = (text: string) => user(text, { injected: 'compaction' });

test('messages come in file order with their seq; envelopes and unknown records are left out', () => {
  const transcript = records(
    {
      type: 'session-meta',
      agentId: 'a',
      agentType: 'worker',
      label: 'A',
      model: 'test:model',
    },
    system('be brief'),
    user('hi'),
    assistant('looking', call('c1')),
    dispatched('c1'),
    tool(result('c1')),
    settled('c1'),
    assistant('done'),
  );
  const foreign = {
    v: 1,
    seq: 8,
    at: 'x',
    type: 'from-the-future',
    role: 'user',
    unknown: true,
  } as ForeignRecord;
  const view = conversationView([...transcript, foreign]);
  assert.deepEqual(
    view.map((message) => message.seq),
    [1, 2, 3, 5, 7],
  );
  assert.deepEqual(withoutSeq(view), [
    system('be brief'),
    user('hi'),
    assistant('looking', call('c1')),
    tool(result('c1')),
    assistant('done'),
  ]);
});

test('extras are kept and no record field leaks into a message', () => {
  const view = conversationView(records(user('ping', { injected: 'background', from: 'child-1' })));
  assert.deepEqual(view, [
    {
      role: 'user',
      content: [{ type: 'text', text: 'ping' }],
      extras: { injected: 'background', from: 'child-1' },
      seq: 0,
    },
  ]);
});

test('a compaction replaces its range with its summary, standing where the range stood', () => {
  const view = conversationView(
    records(
      system('sys'), // 0
      user('first question'), // 1
      assistant('a', call('c1')), // 2
      dispatched('c1'), // 3
      tool(result('c1')), // 4
      settled('c1'), // 5
      assistant('first answer'), // 6
      user('second question'), // 7
      compaction(1, 6, 'they asked and were answered'), // 8
      assistant('second answer'), // 9
    ),
  );
  assert.deepEqual(
    view.map((message) => message.seq),
    [0, 8, 7, 9],
  );
  assert.deepEqual(withoutSeq(view), [
    system('sys'),
    summaryOf('they asked and were answered'),
    user('second question'),
    assistant('second answer'),
  ]);
});

test('a later compaction covering an earlier one removes that summary too', () => {
  const view = conversationView(
    records(
      user('q1'), // 0
      assistant('a1'), // 1
      compaction(0, 1, 'S1'), // 2
      user('q2'), // 3
      assistant('a2'), // 4
      compaction(2, 4, 'S2'), // 5: covers S1's record, not S1's range
      user('q3'), // 6
    ),
  );
  assert.deepEqual(withoutSeq(view), [summaryOf('S2'), user('q3')]);
  assert.deepEqual(
    view.map((message) => message.seq),
    [5, 6],
  );
});

test('nested compactions: the outer summary alone survives', () => {
  const view = conversationView(
    records(
      user('q1'), // 0
      assistant('a1'), // 1
      user('q2'), // 2
      compaction(1, 2, 'inner'), // 3
      assistant('a2'), // 4
      compaction(0, 4, 'outer'), // 5
      user('q3'), // 6
    ),
  );
  assert.deepEqual(withoutSeq(view), [summaryOf('outer'), user('q3')]);
});

test('overlapping compactions that do not cover each other both stand, in range order', () => {
  const view = conversationView(
    records(
      user('q1'), // 0
      assistant('a1'), // 1
      user('q2'), // 2
      assistant('a2'), // 3
      compaction(1, 2, 'A'), // 4
      compaction(2, 3, 'B'), // 5
      user('q3'), // 6
    ),
  );
  assert.deepEqual(withoutSeq(view), [user('q1'), summaryOf('A'), summaryOf('B'), user('q3')]);
});

test('messages written between a turn and its results move after the results', () => {
  const view = conversationView(
    records(
      user('go'), // 0
      assistant(call('c1'), call('c2')), // 1
      dispatched('c1'), // 2
      dispatched('c2'), // 3
      tool(result('c2')), // 4
      settled('c2'), // 5
      user('child finished', { injected: 'background' }), // 6
      user('and hurry'), // 7
      tool(result('c1')), // 8
      settled('c1'), // 9
    ),
  );
  assert.deepEqual(withoutSeq(view), [
    user('go'),
    assistant(call('c1'), call('c2')),
    tool(result('c1'), result('c2')),
    user('child finished', { injected: 'background' }),
    user('and hurry'),
  ]);
  assert.equal(view[2]?.seq, 4, 'the merged tool message is the first one written');
  assert.deepEqual(pairingViolations(view), []);
});

test('parallel calls answered out of order come back in call order, in one message', () => {
  const view = conversationView(
    records(
      user('go'),
      assistant(call('c1'), call('c2'), call('c3')),
      tool(result('c3')),
      tool(result('c1')),
      tool(result('c2')),
      assistant('done'),
    ),
  );
  assert.deepEqual(withoutSeq(view), [
    user('go'),
    assistant(call('c1'), call('c2'), call('c3')),
    tool(result('c1'), result('c2'), result('c3')),
    assistant('done'),
  ]);
  assert.deepEqual(pairingViolations(view), []);
});

test('revival-written results join the turn; the resume notice and later results sort out', () => {
  const interrupted = { ...result('c2', 'interrupted'), isError: true };
  const revivalResult = { ...tool(interrupted), extras: { injected: 'revival' as const } };
  const notice = user('resumed', { injected: 'revival' });
  const view = conversationView(
    records(
      user('go'), // 0
      assistant(call('c1'), call('c2'), call('c3')), // 1
      dispatched('c1'), // 2
      dispatched('c2'), // 3
      tool(result('c1')), // 4
      settled('c1'), // 5
      revivalResult, // 6: the crash left c2 open
      { type: 'tool-settled', callId: 'c2', status: 'failed', reason: 'interrupted' }, // 7
      notice, // 8
      dispatched('c3'), // 9: never dispatched before the crash, so the loop runs it now
      tool(result('c3')), // 10
      settled('c3'), // 11
    ),
  );
  assert.deepEqual(withoutSeq(view), [
    user('go'),
    assistant(call('c1'), call('c2'), call('c3')),
    tool(result('c1'), interrupted, result('c3')),
    notice,
  ]);
  assert.deepEqual(pairingViolations(view), []);
});

test('a revival-only answer keeps its revival mark', () => {
  const interrupted = { ...result('c1', 'interrupted'), isError: true };
  const view = conversationView(
    records(
      user('go'),
      assistant(call('c1')),
      { ...tool(interrupted), extras: { injected: 'revival' } },
      user('resumed', { injected: 'revival' }),
    ),
  );
  assert.deepEqual(view[2]?.extras, { injected: 'revival' });
  assert.deepEqual(pairingViolations(view), []);
});

test('a call answered twice keeps the first answer', () => {
  const view = conversationView(
    records(
      assistant(call('c1')),
      tool(result('c1', 'first')),
      tool(result('c1', 'second')),
      assistant('ok'),
    ),
  );
  assert.deepEqual(withoutSeq(view), [
    assistant(call('c1')),
    tool(result('c1', 'first')),
    assistant('ok'),
  ]);
});

test('a result whose call was compacted away is dropped', () => {
  const view = conversationView(
    records(
      user('go'), // 0
      assistant(call('c1')), // 1
      compaction(0, 1, 'earlier'), // 2: a broken compaction that split a call from its result
      tool(result('c1')), // 3
      assistant('ok'), // 4
    ),
  );
  assert.deepEqual(withoutSeq(view), [summaryOf('earlier'), assistant('ok')]);
  assert.deepEqual(pairingViolations(view), []);
});

test('an unanswered call stays unanswered: the view does not invent results', () => {
  const view = conversationView(
    records(user('go'), assistant(call('c1'), call('c2')), tool(result('c2'))),
  );
  assert.deepEqual(withoutSeq(view), [
    user('go'),
    assistant(call('c1'), call('c2')),
    tool(result('c2')),
  ]);
  assert.deepEqual(
    pairingViolations(view).map((violation) => [violation.rules, violation.code, violation.callId]),
    [
      ['anthropic', 'unanswered-call', 'c1'],
      ['openai-chat', 'unanswered-call', 'c1'],
      ['openai-responses', 'unanswered-call', 'c1'],
    ],
  );
});

test('no records, no conversation', () => {
  assert.deepEqual(conversationView([]), []);
});
