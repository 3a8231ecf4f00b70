import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ViewMessage } from '../../src/transcript/conversation-view.ts';
import { normalizeConversation } from '../../src/transcript/normalize-conversation.ts';
import { pairingViolations } from '../../src/transcript/pairing-violations.ts';
import type { Message } from '../../src/transcript/records.ts';
import { assistant, call, result, system, tool, user } from './conversation-builders.ts';

test('an already normalized conversation comes back deep-equal, with the same messages', () => {
  const valid = [
    system('sys'),
    user('go'),
    assistant('a', call('c1'), call('c2')),
    tool(result('c1'), result('c2')),
    user('news', { injected: 'background' }),
    assistant(call('c3')),
    tool(result('c3')),
    assistant('done'),
  ];
  const normalized = normalizeConversation(valid);
  assert.deepEqual(normalized, valid);
  assert.equal(normalized[2], valid[2], 'assistant turns are passed through, not copied');
  assert.deepEqual(normalizeConversation(normalized), normalized);
});

test('results of one turn split over tool messages are merged into one, in call order', () => {
  const messages = [
    assistant(call('c1'), call('c2'), call('c3')),
    tool(result('c3')),
    tool(result('c1'), result('c2')),
  ];
  assert.deepEqual(normalizeConversation(messages), [
    assistant(call('c1'), call('c2'), call('c3')),
    tool(result('c1'), result('c2'), result('c3')),
  ]);
});

test('messages written between a turn and its results go after the results', () => {
  const messages = [
    assistant(call('c1'), call('c2')),
    user('child done', { injected: 'background' }),
    tool(result('c2')),
    user('resumed', { injected: 'revival' }),
    tool(result('c1')),
  ];
  const normalized = normalizeConversation(messages);
  assert.deepEqual(normalized, [
    assistant(call('c1'), call('c2')),
    tool(result('c1'), result('c2')),
    user('child done', { injected: 'background' }),
    user('resumed', { injected: 'revival' }),
  ]);
  assert.deepEqual(pairingViolations(normalized), []);
});

test('the merged tool message keeps the seq and extras of the first one written', () => {
  const messages: ViewMessage[] = [
    { ...assistant(call('c1'), call('c2')), seq: 1 },
    { ...tool(result('c2')), seq: 3 },
    { ...tool(result('c1')), extras: { injected: 'revival' }, seq: 5 },
  ];
  const normalized = normalizeConversation(messages);
  assert.deepEqual(normalized[1], { ...tool(result('c1'), result('c2')), seq: 3 });
});

test('an orphan result is dropped, and a tool message left empty disappears', () => {
  const messages = [
    user('go'),
    tool(result('ghost')),
    assistant(call('c1')),
    tool(result('c1'), result('zz')),
  ];
  assert.deepEqual(normalizeConversation(messages), [
    user('go'),
    assistant(call('c1')),
    tool(result('c1')),
  ]);
});

test('a call answered twice keeps the first answer, wherever the second one is', () => {
  const messages = [
    assistant(call('c1')),
    tool(result('c1', 'first')),
    user('again?'),
    tool(result('c1', 'second')),
  ];
  assert.deepEqual(normalizeConversation(messages), [
    assistant(call('c1')),
    tool(result('c1', 'first')),
    user('again?'),
  ]);
});

test('a result written after a later turn moves back to its call', () => {
  const messages = [
    assistant(call('c1')),
    user('well?'),
    assistant('still waiting'),
    tool(result('c1')),
  ];
  const normalized = normalizeConversation(messages);
  assert.deepEqual(normalized, [
    assistant(call('c1')),
    tool(result('c1')),
    user('well?'),
    assistant('still waiting'),
  ]);
  assert.deepEqual(pairingViolations(normalized), []);
});

test('an id reused in a later turn pairs with the nearest call before the result', () => {
  const messages = [
    assistant(call('call_0')),
    tool(result('call_0', 'one')),
    assistant(call('call_0')),
    tool(result('call_0', 'two')),
  ];
  assert.deepEqual(normalizeConversation(messages), messages);
});

test('unanswered calls stay unanswered: no result is invented', () => {
  const messages = [user('go'), assistant(call('c1'), call('c2')), tool(result('c2'))];
  assert.deepEqual(normalizeConversation(messages), messages);
  const none = [user('go'), assistant(call('c1'))];
  assert.deepEqual(normalizeConversation(none), none);
});

test('the input is not changed', () => {
  const messages: Message[] = [
    assistant(call('c1'), call('c2')),
    tool(result('c2')),
    tool(result('c1')),
  ];
  const before = structuredClone(messages);
  normalizeConversation(messages);
  assert.deepEqual(messages, before);
});
