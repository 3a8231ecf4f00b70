import assert from 'node:assert/strict';
import { test } from 'node:test';
import { convertToModelMessages, type UIMessage } from 'ai';
import { answerInterruptedToolParts } from '../../src/integrations/ai-sdk/index.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';

/*
 * A useChat history a crash left with tool parts that have no outcome: each is answered as
 * interrupted (the model reads it and does not make the call again blindly), not dropped.
 */

const history: UIMessage[] = [
  { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Email ann and look bob up.' }] },
  {
    id: 'a1',
    role: 'assistant',
    parts: [
      { type: 'text', text: 'On it.' },
      { type: 'tool-sendEmail', toolCallId: 'c1', state: 'input-available', input: { to: 'ann' } },
      {
        type: 'tool-lookup',
        toolCallId: 'c2',
        state: 'output-available',
        input: { name: 'bob' },
        output: 'bob@example.com',
      },
      {
        type: 'dynamic-tool',
        toolName: 'fetch',
        toolCallId: 'c3',
        state: 'input-streaming',
        input: undefined,
      },
    ],
  },
];

test('dangling tool parts are answered as interrupted; answered ones and the input are untouched', async () => {
  const answered = answerInterruptedToolParts(history);
  assert.notEqual(answered, history);
  assert.equal(
    (history[1]?.parts[1] as { state?: string } | undefined)?.state,
    'input-available',
    'the input is not changed',
  );
  const parts = answered[1]?.parts ?? [];
  assert.deepEqual(
    parts.map((part) => (part as { state?: string }).state),
    [undefined, 'output-error', 'output-available', 'output-error'],
  );
  const modelMessages = await convertToModelMessages(answered);
  const results = modelMessages.flatMap((message) =>
    message.role === 'tool'
      ? message.content.flatMap((part) => (part.type === 'tool-result' ? [part] : []))
      : [],
  );
  assert.deepEqual(
    results.map((part) => [
      part.toolCallId,
      part.output.type,
      'value' in part.output ? part.output.value : null,
    ]),
    [
      ['c1', 'error-text', INTERRUPTED_MESSAGE],
      ['c2', 'text', 'bob@example.com'],
      ['c3', 'error-text', INTERRUPTED_MESSAGE],
    ],
  );
});

test('without the helper, the call is left unanswered (a provider answers 400) or dropped', async () => {
  const results = (await convertToModelMessages(history)).flatMap((message) =>
    message.role === 'tool'
      ? message.content.map((part) => (part as { toolCallId?: string }).toolCallId)
      : [],
  );
  assert.ok(!results.includes('c1'), 'nothing answers c1');
  const dropped = await convertToModelMessages(history, { ignoreIncompleteToolCalls: true });
  assert.ok(
    !JSON.stringify(dropped).includes('"c1"'),
    'ignoreIncompleteToolCalls forgets the call',
  );
});
