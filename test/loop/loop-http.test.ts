import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { inputDigest } from '../../src/loop/input-digest.ts';
import { Loop } from '../../src/loop/loop.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { Session } from '../../src/transcript/session.ts';
import {
  assertWriteOrder,
  echoTool,
  freshSession,
  type LogEntry,
  RecordingFileSystem,
  recordsOf,
  shapeOf,
  waitTool,
} from './support/harness.ts';
import { startAnthropicServer, startChatServer } from '../../src/testing/index.ts';

const chatModel = (url: string) =>
  createOpenAICompatible({ name: 'scripted', baseURL: url, apiKey: 'test', includeUsage: true })(
    'scripted-model',
  );
const anthropicModel = (url: string) =>
  createAnthropic({ baseURL: url, apiKey: 'test' })('claude-scripted');

test('the scripted servers really refuse broken pairings with the providers’ 400 texts', async () => {
  const chat = await startChatServer([]);
  const anthropic = await startAnthropicServer([]);
  try {
    const chatResponse = await fetch(`${chat.url}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({
        model: 'x',
        messages: [
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } },
            ],
          },
          { role: 'user', content: 'interrupting' },
        ],
      }),
    });
    assert.equal(chatResponse.status, 400);
    const chatError = (await chatResponse.json()) as { error: { message: string } };
    assert.equal(
      chatError.error.message,
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
    );
    const orphan = await fetch(`${chat.url}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({
        model: 'x',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'call_9', content: 'x' },
        ],
      }),
    });
    assert.equal(orphan.status, 400);
    assert.match(
      ((await orphan.json()) as { error: { message: string } }).error.message,
      /must be a response to a preceeding message with 'tool_calls'/,
    );
    const anthropicResponse = await fetch(`${anthropic.url}/messages`, {
      method: 'POST',
      body: JSON.stringify({
        model: 'x',
        messages: [
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }],
          },
          { role: 'user', content: [{ type: 'text', text: 'interrupting' }] },
        ],
      }),
    });
    assert.equal(anthropicResponse.status, 400);
    assert.equal(
      ((await anthropicResponse.json()) as { error: { message: string } }).error.message,
      'messages.2: Did not find 1 tool_result block(s) at the beginning of this message. Messages following tool_use blocks must begin with a matching number of tool_result blocks.',
    );
  } finally {
    await chat.close();
    await anthropic.close();
  }
});

test('OpenAI-compatible over HTTP: parallel calls, failover from a 503, every request accepted', async () => {
  const log: LogEntry[] = [];
  const fixture = await freshSession(new RecordingFileSystem(log));
  const down = await startChatServer([{ status: 503 }]);
  const chat = await startChatServer([
    {
      text: 'Echoing twice.',
      calls: [
        { id: 'call_a', name: 'echo', input: { text: 'one' } },
        { id: 'call_b', name: 'echo', input: { text: 'two' } },
      ],
    },
    { calls: [{ id: 'call_c', name: 'echo', input: { text: 'three' } }] },
    { text: 'All three echoed.' },
  ]);
  try {
    // The first backend is down (503, then 500s once its script is spent): every turn fails
    // over to the second.
    const loop = new Loop({
      backends: [chatModel(down.url), chatModel(chat.url)],
      writer: fixture.session,
      tools: [echoTool(log)],
      system: 'Be brief.',
    });
    const result = await loop.start('Echo one, two, then three.');
    assert.equal(result.status, 'finished', result.error);
    assert.equal(result.text, 'All three echoed.');
    assert.deepEqual(chat.rejections, []);
    assert.equal(down.requests.length, 3, 'every turn really met the broken backend first');
    assert.equal(chat.remaining(), 0);
    assert.equal(assertWriteOrder(log), 3);
    // The second request carries both results, as tool messages right after their calls.
    const second = chat.requests[1]?.messages as { role: string; tool_call_id?: string }[];
    assert.deepEqual(
      second.map((message) => message.tool_call_id ?? message.role),
      ['system', 'user', 'assistant', 'call_a', 'call_b'],
    );
  } finally {
    await fixture.close();
    await down.close();
    await chat.close();
  }
});

test('OpenAI-compatible over HTTP: a revived pending join and its resume notice are sent in a valid order', async () => {
  const fixture = await freshSession();
  for (const body of [
    {
      type: 'message' as const,
      role: 'user' as const,
      content: [{ type: 'text' as const, text: 'Wait for the child' }],
    },
    {
      type: 'message' as const,
      role: 'assistant' as const,
      content: [
        {
          type: 'tool-call' as const,
          callId: 'call_w',
          toolName: 'task_wait',
          input: { agentIds: ['child-1'] },
        },
      ],
    },
    {
      type: 'tool-dispatched' as const,
      callId: 'call_w',
      toolName: 'task_wait',
      inputDigest: inputDigest({ agentIds: ['child-1'] }),
      idempotency: 'read-only' as const,
      joins: ['child-1'],
    },
    {
      type: 'message' as const,
      role: 'user' as const,
      content: [{ type: 'text' as const, text: '[background event] resumed' }],
      extras: { injected: 'revival' as const },
    },
  ]) {
    await fixture.session.append(body);
  }
  await fixture.session.close();
  const session = await Session.open(fixture.path);
  const chat = await startChatServer([{ text: 'The child said 42.' }]);
  try {
    const loop = new Loop({
      backends: [chatModel(chat.url)],
      writer: session,
      tools: [waitTool],
      resolveJoin: async () => ({ output: 'child-1: 42', isError: false }),
    });
    const result = await loop.run(conversationView(await recordsOf(fixture.path)));
    assert.equal(result.status, 'finished', result.error);
    assert.deepEqual(chat.rejections, []);
    const messages = chat.requests[0]?.messages as { role: string }[];
    assert.deepEqual(
      messages.map((message) => message.role),
      ['user', 'assistant', 'tool', 'user'],
    );
  } finally {
    await session.close();
    await fixture.close();
    await chat.close();
  }
});

test('Anthropic over HTTP: thinking replayed unmodified, parallel results first in one user turn', async () => {
  const log: LogEntry[] = [];
  const fixture = await freshSession(new RecordingFileSystem(log));
  const anthropic = await startAnthropicServer([
    {
      thinking: { text: 'Two echoes, in parallel.', signature: 'sig-abc' },
      text: 'Echoing.',
      calls: [
        { id: 'toolu_a', name: 'echo', input: { text: 'one' } },
        { id: 'toolu_b', name: 'echo', input: { text: 'two' } },
      ],
    },
    {
      thinking: { text: 'One more.', signature: 'sig-def' },
      calls: [{ id: 'toolu_c', name: 'bogus', input: {} }],
    },
    { text: 'Done.' },
  ]);
  try {
    const loop = new Loop({
      backends: [anthropicModel(anthropic.url)],
      writer: fixture.session,
      tools: [echoTool(log)],
      system: 'Be brief.',
    });
    const result = await loop.start('Echo one and two.');
    assert.equal(result.status, 'finished', result.error);
    assert.equal(result.text, 'Done.');
    assert.deepEqual(anthropic.rejections, []);
    assert.equal(anthropic.remaining(), 0);
    assert.equal(assertWriteOrder(log), 2);
    const second = anthropic.requests[1]?.messages as {
      role: string;
      content: { type: string; signature?: string; tool_use_id?: string }[];
    }[];
    assert.deepEqual(
      second[1]?.content.map((block) => block.signature ?? block.type),
      ['sig-abc', 'text', 'tool_use', 'tool_use'],
    );
    assert.deepEqual(
      second[2]?.content.map((block) => block.tool_use_id),
      ['toolu_a', 'toolu_b'],
    );
    const third = anthropic.requests[2]?.messages as {
      content: { type: string; is_error?: boolean }[];
    }[];
    assert.equal(third.at(-1)?.content[0]?.type, 'tool_result');
    assert.equal(
      third.at(-1)?.content[0]?.is_error,
      true,
      'the unknown tool was answered as an error',
    );
    const records = await recordsOf(fixture.path);
    assert.ok(!shapeOf(records).includes('tool-dispatched:toolu_c'));
  } finally {
    await fixture.close();
    await anthropic.close();
  }
});
