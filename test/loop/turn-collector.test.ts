import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LanguageModelV4StreamPart, LanguageModelV4Usage } from '@ai-sdk/provider';
import { StreamProviderError } from 'ai';
import { classifyModelError } from '../../src/loop/call-model.ts';
import { assistantMessageFromOutput } from '../../src/loop/model-messages.ts';
import { IncompleteStreamError, TurnCollector } from '../../src/loop/turn-collector.ts';

const usage: LanguageModelV4Usage = {
  inputTokens: { total: 12, noCache: 10, cacheRead: 2, cacheWrite: undefined },
  outputTokens: { total: 7, text: 5, reasoning: 2 },
};

const finish: LanguageModelV4StreamPart = {
  type: 'finish',
  usage,
  finishReason: { unified: 'stop', raw: 'end_turn' },
};

function collect(parts: readonly LanguageModelV4StreamPart[]): TurnCollector {
  const collector = new TurnCollector();
  for (const part of parts) collector.add(part);
  return collector;
}

/** The turn the loop would store, or the test fails saying why there is none. */
function stored(parts: readonly LanguageModelV4StreamPart[]) {
  const turn = collect(parts).finish();
  if (!turn.ok) throw new assert.AssertionError({ message: `no turn: ${String(turn.error)}` });
  return assistantMessageFromOutput(turn.content);
}

function errorOf(parts: readonly LanguageModelV4StreamPart[]): unknown {
  const turn = collect(parts).finish();
  assert.equal(turn.ok, false, 'the turn failed');
  return turn.ok ? undefined : turn.error;
}

test('text and reasoning accumulate per id, in the order their blocks opened', () => {
  const message = stored([
    { type: 'stream-start', warnings: [] },
    { type: 'reasoning-start', id: 'r' },
    { type: 'text-start', id: 'a' },
    { type: 'text-start', id: 'b' },
    { type: 'text-delta', id: 'b', delta: 'second ' },
    { type: 'reasoning-delta', id: 'r', delta: 'think' },
    { type: 'text-delta', id: 'a', delta: 'first ' },
    { type: 'text-delta', id: 'b', delta: 'block' },
    { type: 'text-delta', id: 'a', delta: 'block' },
    { type: 'text-end', id: 'b' },
    { type: 'text-end', id: 'a' },
    { type: 'reasoning-end', id: 'r' },
    finish,
  ]);
  assert.deepEqual(message.content, [
    { type: 'reasoning', text: 'think' },
    { type: 'text', text: 'first block' },
    { type: 'text', text: 'second block' },
  ]);
});

test('a text and a reasoning block may share an id: they stay two parts', () => {
  const message = stored([
    { type: 'reasoning-start', id: '0' },
    { type: 'text-start', id: '0' },
    { type: 'reasoning-delta', id: '0', delta: 'why' },
    { type: 'text-delta', id: '0', delta: 'what' },
    { type: 'reasoning-end', id: '0' },
    { type: 'text-end', id: '0' },
    finish,
  ]);
  assert.deepEqual(message.content, [
    { type: 'reasoning', text: 'why' },
    { type: 'text', text: 'what' },
  ]);
});

test('an id reused after its block ended opens a new part', () => {
  const message = stored([
    { type: 'text-start', id: '0' },
    { type: 'text-delta', id: '0', delta: 'one' },
    { type: 'text-end', id: '0' },
    { type: 'text-start', id: '0' },
    { type: 'text-delta', id: '0', delta: 'two' },
    { type: 'text-end', id: '0' },
    finish,
  ]);
  assert.deepEqual(message.content, [
    { type: 'text', text: 'one' },
    { type: 'text', text: 'two' },
  ]);
});

test('the latest non-null provider metadata wins: a signature on reasoning-end is kept', () => {
  const message = stored([
    { type: 'reasoning-start', id: 'r', providerMetadata: { anthropic: { signature: '' } } },
    { type: 'reasoning-delta', id: 'r', delta: 'Let me see.' },
    { type: 'reasoning-end', id: 'r', providerMetadata: { anthropic: { signature: 'sig-final' } } },
    { type: 'text-start', id: 't', providerMetadata: { openai: { itemId: 'msg_1' } } },
    // A later part without metadata does not erase what an earlier one carried.
    { type: 'text-delta', id: 't', delta: 'Done.' },
    { type: 'text-end', id: 't' },
    finish,
  ]);
  assert.deepEqual(message.content, [
    { type: 'reasoning', text: 'Let me see.', provider: { anthropic: { signature: 'sig-final' } } },
    { type: 'text', text: 'Done.', provider: { openai: { itemId: 'msg_1' } } },
  ]);
});

test('a signature on the last reasoning delta is kept when the end carries none', () => {
  const message = stored([
    { type: 'reasoning-start', id: 'r' },
    { type: 'reasoning-delta', id: 'r', delta: 'Hmm' },
    {
      type: 'reasoning-delta',
      id: 'r',
      delta: '',
      providerMetadata: { anthropic: { signature: 'sig-delta' } },
    },
    { type: 'reasoning-end', id: 'r' },
    finish,
  ]);
  assert.deepEqual(message.content, [
    { type: 'reasoning', text: 'Hmm', provider: { anthropic: { signature: 'sig-delta' } } },
  ]);
});

function callWithInput(input: string, toolName = 'read_file') {
  const message = stored([{ type: 'tool-call', toolCallId: 'call_1', toolName, input }, finish]);
  const [part] = message.content;
  assert.equal(part?.type, 'tool-call');
  return part?.type === 'tool-call' ? part.input : undefined;
}

test('a tool call with empty or blank input is stored with {}', () => {
  assert.deepEqual(callWithInput(''), {});
  assert.deepEqual(callWithInput('  \n\t'), {});
});

test('a blank input is {} for an undeclared tool too (streamText kept the blank string)', () => {
  // The collector does not know the declared tools; the loop answers "unknown tool" either way.
  assert.deepEqual(callWithInput('', 'no_such_tool'), {});
});

test('a tool call with JSON input is stored parsed', () => {
  assert.deepEqual(callWithInput('{"path":"a.md","lines":[1,2]}'), {
    path: 'a.md',
    lines: [1, 2],
  });
});

test('a tool call with input that is not JSON keeps the raw string', () => {
  assert.equal(callWithInput('{"path": "a.md"'), '{"path": "a.md"');
  assert.equal(callWithInput("{'path': 'a.md'}"), "{'path': 'a.md'}");
});

test('input with a prototype key is kept as the raw string, as secure-json-parse made the SDK do', () => {
  for (const input of [
    '{"__proto__":{"polluted":true}}',
    '{"list":[{"__proto__":{}}]}',
    '{"constructor":{"prototype":{"polluted":true}}}',
  ]) {
    assert.equal(callWithInput(input), input);
  }
  assert.deepEqual(callWithInput('{"constructor":{"name":"fine"}}'), {
    constructor: { name: 'fine' },
  });
  assert.equal(({} as { polluted?: boolean }).polluted, undefined);
});

test('provider-executed calls and their results do not reach the stored message', () => {
  const parts: LanguageModelV4StreamPart[] = [
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'Searching.' },
    { type: 'text-end', id: 't' },
    {
      type: 'tool-call',
      toolCallId: 'srvtoolu_1',
      toolName: 'web_search',
      input: '{"query":"x"}',
      providerExecuted: true,
    },
    {
      type: 'tool-result',
      toolCallId: 'srvtoolu_1',
      toolName: 'web_search',
      result: { hits: [] },
    },
    { type: 'tool-call', toolCallId: 'call_2', toolName: 'read_file', input: '{}' },
    finish,
  ];
  const turn = collect(parts).finish();
  assert.ok(turn.ok);
  // The collector keeps the flag; the stored message leaves the call out.
  assert.ok(
    turn.content.some((part) => part.type === 'tool-call' && part.providerExecuted === true),
  );
  assert.deepEqual(stored(parts).content, [
    { type: 'text', text: 'Searching.' },
    { type: 'tool-call', callId: 'call_2', toolName: 'read_file', input: {} },
  ]);
});

test('raw, ping, source, metadata and tool-input parts leave the turn as it is', () => {
  const message = stored([
    { type: 'stream-start', warnings: [] },
    { type: 'response-metadata', id: 'resp_1', modelId: 'm' },
    { type: 'raw', rawValue: { anything: true } },
    { type: 'ping' },
    { type: 'source', sourceType: 'url', id: 's', url: 'https://example.com' },
    { type: 'tool-input-start', id: 'call_1', toolName: 'read_file' },
    { type: 'tool-input-delta', id: 'call_1', delta: '{"path":' },
    { type: 'tool-input-delta', id: 'call_1', delta: '"a"}' },
    { type: 'tool-input-end', id: 'call_1' },
    { type: 'tool-call', toolCallId: 'call_1', toolName: 'read_file', input: '{"path":"a"}' },
    finish,
  ]);
  assert.deepEqual(message.content, [
    { type: 'tool-call', callId: 'call_1', toolName: 'read_file', input: { path: 'a' } },
  ]);
});

test('the finish part gives the finish reason and the total token counts', () => {
  const turn = collect([
    { type: 'text-start', id: 't' },
    { type: 'text-end', id: 't' },
    { type: 'finish', usage, finishReason: { unified: 'tool-calls', raw: 'tool_use' } },
  ]).finish();
  assert.ok(turn.ok);
  assert.equal(turn.finishReason, 'tool-calls');
  assert.deepEqual(turn.usage, { inputTokens: 12, outputTokens: 7 });
});

test('token counts the provider did not give are 0', () => {
  const turn = collect([
    {
      type: 'finish',
      usage: {
        inputTokens: {
          total: undefined,
          noCache: undefined,
          cacheRead: undefined,
          cacheWrite: undefined,
        },
        outputTokens: { total: undefined, text: 3, reasoning: undefined },
      },
      finishReason: { unified: 'stop', raw: undefined },
    },
  ]).finish();
  assert.ok(turn.ok);
  assert.deepEqual(turn.usage, { inputTokens: 0, outputTokens: 0 });
});

test('a stream without its finish part is an IncompleteStreamError, worth another attempt', () => {
  const error = errorOf([
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'The answer is' },
  ]);
  assert.ok(error instanceof IncompleteStreamError);
  assert.equal(classifyModelError(error), 'retry');
  assert.equal(collect([]).finish().ok, false, 'an empty stream is incomplete too');
});

test('the first error part wins, and `failed` turns true with it', () => {
  // (The loop reading streamText's fullStream kept the last; a real stream carries one.)
  const collector = collect([
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'Sta' },
  ]);
  assert.equal(collector.failed, false);
  collector.add({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  assert.equal(collector.failed, true);
  collector.add({ type: 'error', error: { type: 'api_error', message: 'second' } });
  collector.add(finish);
  const turn = collector.finish();
  assert.equal(turn.ok, false);
  const error = turn.ok ? undefined : turn.error;
  assert.ok(StreamProviderError.isInstance(error));
  assert.equal(error.message, 'Overloaded');
});

test('warnings are described one line each', () => {
  const collector = collect([
    {
      type: 'stream-start',
      warnings: [
        { type: 'unsupported', feature: 'temperature', details: 'reasoning models ignore it' },
        { type: 'compatibility', feature: 'tools' },
        { type: 'deprecated', setting: 'maxTokens', message: 'use maxOutputTokens' },
        { type: 'other', message: 'the first line\nand a second one' },
      ],
    },
    finish,
  ]);
  assert.deepEqual(collector.warnings, [
    'unsupported: temperature (reasoning models ignore it)',
    'compatibility: tools',
    'deprecated: maxTokens: use maxOutputTokens',
    'other: the first line and a second one',
  ]);
});

test('an overloaded_error mid-stream classifies retry', () => {
  const error = errorOf([
    { type: 'text-start', id: 't' },
    { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
  ]);
  assert.ok(StreamProviderError.isInstance(error));
  assert.equal(error.statusCode, 503);
  assert.equal(error.type, 'overloaded_error');
  assert.equal(classifyModelError(error), 'retry');
});

test('an invalid_request_error mid-stream classifies fatal', () => {
  const error = errorOf([
    { type: 'text-start', id: 't' },
    { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long' } },
    finish,
  ]);
  assert.ok(StreamProviderError.isInstance(error));
  assert.equal(error.message, 'prompt is too long');
  assert.equal(error.isRetryable, false);
  assert.equal(classifyModelError(error), 'fatal');
});

test('an error value without a message is reported as it came: a transport failure', () => {
  for (const value of ['upstream connect error', { type: 'api_error' }, null]) {
    const error = errorOf([{ type: 'error', error: value }, finish]);
    assert.equal(error, value);
    assert.equal(classifyModelError(error), 'retry');
  }
});

test('an Error in an error part is reported as the same instance', () => {
  const cause = new Error('socket hang up');
  assert.equal(errorOf([{ type: 'error', error: cause }]), cause);
});
