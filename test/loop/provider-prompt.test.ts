import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ModelMessage } from 'ai';
import { toProviderMessages, toProviderPrompt } from '../../src/loop/provider-prompt.ts';

/** Asserts a TypeError whose message names both the role and the kind of part. */
function assertRefused(messages: ModelMessage[], role: string, kind: string): void {
  assert.throws(
    () => toProviderMessages(messages),
    (error: unknown) => {
      assert.ok(error instanceof TypeError, `not a TypeError: ${String(error)}`);
      assert.match(error.message, new RegExp(`a ${role} message holds a "${kind}" part`));
      return true;
    },
  );
}

test('an image or a file in a user message is refused, naming the role and the kind', () => {
  assertRefused(
    [{ role: 'user', content: [{ type: 'image', image: new URL('https://example.com/a.png') }] }],
    'user',
    'image',
  );
  assertRefused(
    [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'see' },
          { type: 'file', data: 'aGk=', mediaType: 'text/plain' },
        ],
      },
    ],
    'user',
    'file',
  );
});

test('a file in an assistant message is refused', () => {
  assertRefused(
    [{ role: 'assistant', content: [{ type: 'file', data: 'aGk=', mediaType: 'text/plain' }] }],
    'assistant',
    'file',
  );
});

test("a tool result with a 'content' output is refused", () => {
  assertRefused(
    [
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_1',
            toolName: 'shot',
            output: { type: 'content', value: [{ type: 'text', text: 'a picture' }] },
          },
        ],
      },
    ],
    'tool',
    'content output',
  );
});

test('approval parts are refused, in a tool message and in an assistant message', () => {
  assertRefused(
    [
      {
        role: 'tool',
        content: [{ type: 'tool-approval-response', approvalId: 'approval_1', approved: true }],
      },
    ],
    'tool',
    'tool-approval-response',
  );
  assertRefused(
    [
      {
        role: 'assistant',
        content: [
          {
            type: 'tool-call',
            toolCallId: 'call_1',
            toolName: 'rm',
            input: {},
          },
          { type: 'tool-approval-request', approvalId: 'approval_1', toolCallId: 'call_1' },
        ],
      },
    ],
    'assistant',
    'tool-approval-request',
  );
});

test('a tool message left with no results is dropped; the others stay in order', () => {
  const messages: ModelMessage[] = [
    { role: 'user', content: [{ type: 'text', text: 'go' }] },
    { role: 'tool', content: [] },
    { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
  ];
  assert.deepEqual(toProviderMessages(messages), [
    { role: 'user', content: [{ type: 'text', text: 'go' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
  ]);
  // Dropped at the end too, and with nothing else around it.
  assert.deepEqual(toProviderMessages([{ role: 'tool', content: [] }]), []);
});

test('empty user text is dropped, with or without provider options; the message stays', () => {
  const messages: ModelMessage[] = [
    {
      role: 'user',
      content: [
        { type: 'text', text: '' },
        { type: 'text', text: 'hi' },
        { type: 'text', text: '', providerOptions: { anthropic: { cacheControl: 'x' } } },
      ],
    },
    { role: 'user', content: [{ type: 'text', text: '' }] },
  ];
  assert.deepEqual(toProviderMessages(messages), [
    { role: 'user', content: [{ type: 'text', text: 'hi' }] },
    { role: 'user', content: [] },
  ]);
});

test('empty assistant text is kept only when it carries provider options', () => {
  const options = { anthropic: { signature: 's' } };
  const messages: ModelMessage[] = [
    {
      role: 'assistant',
      content: [
        { type: 'text', text: '' },
        { type: 'text', text: '', providerOptions: options },
        { type: 'reasoning', text: '' },
        { type: 'text', text: 'ok' },
      ],
    },
  ];
  assert.deepEqual(toProviderMessages(messages), [
    {
      role: 'assistant',
      content: [
        { type: 'text', text: '', providerOptions: options },
        { type: 'reasoning', text: '' },
        { type: 'text', text: 'ok' },
      ],
    },
  ]);
});

test('the instructions become the one system message, first', () => {
  const messages: ModelMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];
  assert.deepEqual(toProviderPrompt({ instructions: 'Be brief.', messages }), [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'hi' }] },
  ]);
  assert.deepEqual(toProviderPrompt({ messages }), [
    { role: 'user', content: [{ type: 'text', text: 'hi' }] },
  ]);
});
