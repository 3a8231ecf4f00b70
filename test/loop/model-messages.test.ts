import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonSchema } from 'ai';
import { z } from 'zod';
import { checkJsonSchema } from '../../src/loop/check-json-schema.ts';
import type { JsonValue } from '../../src/transcript/records.ts';
import { canonicalJson, inputDigest } from '../../src/loop/input-digest.ts';
import { Loop } from '../../src/loop/loop.ts';
import {
  assistantMessageFromOutput,
  fromModelMessages,
  toModelMessages,
  toModelPrompt,
} from '../../src/loop/model-messages.ts';
import { validateInput } from '../../src/loop/run-tool-call.ts';
import type { Message } from '../../src/transcript/records.ts';
import { echoTool, recordsOf, withFreshSession } from './support/harness.ts';
import { ScriptedModel } from '../../src/testing/index.ts';

const conversation: Message[] = [
  { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
  { role: 'user', content: [{ type: 'text', text: 'Read two files' }] },
  {
    role: 'assistant',
    content: [
      {
        type: 'reasoning',
        text: 'I should read both.',
        provider: { anthropic: { signature: 'sig' } },
      },
      { type: 'text', text: 'Reading.' },
      { type: 'tool-call', callId: 'a', toolName: 'read', input: { path: 'a' } },
      {
        type: 'tool-call',
        callId: 'b',
        toolName: 'read',
        input: { path: 'b' },
        provider: { openai: { itemId: 'fc_1' } },
      },
    ],
  },
  {
    role: 'tool',
    content: [
      { type: 'tool-result', callId: 'b', toolName: 'read', output: { size: 2 }, isError: false },
    ],
  },
  {
    role: 'tool',
    content: [
      { type: 'tool-result', callId: 'a', toolName: 'read', output: 'ENOENT', isError: true },
    ],
  },
  { role: 'assistant', content: [{ type: 'text', text: 'a is missing; b has 2 bytes.' }] },
];

test('toModelMessages: one tool message per turn, results in call order, provider data carried', () => {
  const messages = toModelMessages(conversation);
  assert.deepEqual(
    messages.map((message) => message.role),
    ['system', 'user', 'assistant', 'tool', 'assistant'],
  );
  const assistant = messages[2];
  assert.ok(assistant?.role === 'assistant' && Array.isArray(assistant.content));
  assert.deepEqual(assistant.content[0], {
    type: 'reasoning',
    text: 'I should read both.',
    providerOptions: { anthropic: { signature: 'sig' } },
  });
  assert.deepEqual(assistant.content[3], {
    type: 'tool-call',
    toolCallId: 'b',
    toolName: 'read',
    input: { path: 'b' },
    providerOptions: { openai: { itemId: 'fc_1' } },
  });
  const tool = messages[3];
  assert.ok(tool?.role === 'tool');
  assert.deepEqual(tool.content, [
    {
      type: 'tool-result',
      toolCallId: 'a',
      toolName: 'read',
      output: { type: 'error-text', value: 'ENOENT' },
    },
    {
      type: 'tool-result',
      toolCallId: 'b',
      toolName: 'read',
      output: { type: 'json', value: { size: 2 } },
    },
  ]);
});

test('fromModelMessages(toModelMessages(x)) gives x back, tool messages merged', () => {
  const back = fromModelMessages(toModelMessages(conversation));
  const merged: Message[] = [
    ...conversation.slice(0, 3),
    {
      role: 'tool',
      content: [
        { type: 'tool-result', callId: 'a', toolName: 'read', output: 'ENOENT', isError: true },
        { type: 'tool-result', callId: 'b', toolName: 'read', output: { size: 2 }, isError: false },
      ],
    },
    conversation[5] as Message,
  ];
  assert.deepEqual(back, merged);
});

test('assistantMessageFromOutput keeps reasoning metadata and drops what we do not store', () => {
  const message = assistantMessageFromOutput([
    { type: 'reasoning', text: 'hmm', providerMetadata: { anthropic: { signature: 's1' } } },
    { type: 'text', text: '' },
    { type: 'text', text: 'Hi' },
    { type: 'source', id: 'x' },
    {
      type: 'tool-call',
      toolCallId: 'p',
      toolName: 'web_search',
      input: {},
      providerExecuted: true,
    },
    { type: 'tool-call', toolCallId: 'c', toolName: 'read', input: { path: 'a' } },
    { type: 'tool-error', toolCallId: 'c' },
  ]);
  assert.deepEqual(message, {
    role: 'assistant',
    content: [
      { type: 'reasoning', text: 'hmm', provider: { anthropic: { signature: 's1' } } },
      { type: 'text', text: 'Hi' },
      { type: 'tool-call', callId: 'c', toolName: 'read', input: { path: 'a' } },
    ],
  });
});

test('inputDigest is the sha256 of canonical JSON: member order does not matter', () => {
  assert.equal(
    canonicalJson({ b: 1, a: [true, null, { d: 'x', c: 2 }] }),
    '{"a":[true,null,{"c":2,"d":"x"}],"b":1}',
  );
  assert.equal(inputDigest({ a: 1, b: 2 }), inputDigest({ b: 2, a: 1 }));
  assert.notEqual(inputDigest({ a: 1 }), inputDigest({ a: 2 }));
  assert.equal(
    inputDigest({}),
    'sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a',
  );
});

test('reasoning and its signature go to disk and back to the model unchanged on the next turn', () =>
  withFreshSession(async (fixture) => {
    const model = new ScriptedModel([
      {
        reasoning: { text: 'Think first.', signature: 'sig-123' },
        calls: [{ id: 'c1', name: 'echo', input: { text: 'x' } }],
      },
      { text: 'Done.' },
    ]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [echoTool([])],
    });
    assert.equal((await loop.start('Go')).status, 'finished');
    const records = await recordsOf(fixture.path);
    const assistant = records.find(
      (record) => record.type === 'message' && record.role === 'assistant',
    );
    assert.ok(assistant?.type === 'message');
    assert.deepEqual(assistant.content[0], {
      type: 'reasoning',
      text: 'Think first.',
      provider: { scripted: { signature: 'sig-123' } },
    });
    const replayed = model.prompts[1]?.find((message) => message.role === 'assistant');
    assert.ok(replayed?.role === 'assistant');
    assert.deepEqual(replayed.content[0], {
      type: 'reasoning',
      text: 'Think first.',
      providerOptions: { scripted: { signature: 'sig-123' } },
    });
  }));

test('checkJsonSchema: a full JSON Schema validator, with paths in its messages', () => {
  const schema = {
    type: 'object',
    required: ['path', 'mode'],
    additionalProperties: false,
    properties: {
      path: { type: 'string', minLength: 1 },
      mode: { enum: ['read', 'write'] },
      lines: { type: 'array', items: { type: 'integer', minimum: 0 } },
    },
  };
  assert.deepEqual(checkJsonSchema(schema, { path: 'a', mode: 'read', lines: [1, 2] }), []);
  assert.deepEqual(checkJsonSchema(schema, { path: '', lines: [1, -1, 'x'], extra: true }), [
    'input: instance does not have required property "mode"',
    'input.path: string is too short (0 < 1)',
    'input.lines[1]: -1 is less than 0',
    'input.lines[2]: instance type "string" is invalid. Expected "integer"',
    'input: property "extra" does not match additional properties schema',
  ]);
  assert.deepEqual(checkJsonSchema({ anyOf: [{ type: 'string' }, { type: 'number' }] }, true), [
    'input: instance does not match any subschemas',
  ]);
  assert.deepEqual(checkJsonSchema('not a schema', { a: 1 }), []);
});

test('checkJsonSchema refuses what a subset checker let through: $ref/$defs, oneOf, pattern, allOf, exclusiveMinimum, uniqueItems', () => {
  const cases: [string, object, JsonValue, JsonValue][] = [
    [
      '$ref/$defs',
      {
        $defs: { n: { type: 'integer' } },
        type: 'object',
        properties: { a: { $ref: '#/$defs/n' } },
      },
      { a: 'x' },
      { a: 1 },
    ],
    ['oneOf (exactly one)', { oneOf: [{ type: 'integer' }, { type: 'number' }] }, 1, 1.5],
    ['pattern', { type: 'string', pattern: '^[a-z]+$' }, 'A1', 'ab'],
    [
      'allOf',
      { allOf: [{ type: 'object', required: ['a'] }, { required: ['b'] }] },
      { a: 1 },
      { a: 1, b: 2 },
    ],
    ['exclusiveMinimum', { type: 'number', exclusiveMinimum: 0 }, 0, 0.5],
    ['uniqueItems', { type: 'array', uniqueItems: true }, [1, 1], [1, 2]],
  ];
  for (const [name, schema, invalid, valid] of cases) {
    assert.notDeepEqual(
      checkJsonSchema(schema, invalid),
      [],
      `${name}: the invalid input is refused`,
    );
    assert.deepEqual(checkJsonSchema(schema, valid), [], `${name}: the valid input passes`);
  }
  // The draft is the schema's own: in draft-04, exclusiveMinimum is a boolean beside minimum.
  const draft4 = {
    $schema: 'http://json-schema.org/draft-04/schema#',
    minimum: 0,
    exclusiveMinimum: true,
  };
  assert.notDeepEqual(checkJsonSchema(draft4, 0), []);
  assert.deepEqual(checkJsonSchema(draft4, 1), []);
});

test('validateInput: zod, JSON Schema with and without a validator', async () => {
  const zodTool = { inputSchema: z.object({ n: z.number().default(3) }) };
  assert.deepEqual(await validateInput(zodTool, {}), { ok: true, value: { n: 3 } });
  const invalid = await validateInput(zodTool, { n: 'x' });
  assert.equal(invalid.ok, false);
  const bare = { inputSchema: jsonSchema({ type: 'object', required: ['q'] }) };
  assert.deepEqual(await validateInput(bare, {}), {
    ok: false,
    detail: 'input: instance does not have required property "q"',
  });
  assert.deepEqual(await validateInput(bare, { q: 1 }), { ok: true, value: { q: 1 } });
  const custom = {
    inputSchema: jsonSchema<{ q: number }>(
      { type: 'object' },
      {
        validate: (value) =>
          (value as { q?: unknown }).q === 1
            ? { success: true, value: value as { q: number } }
            : { success: false, error: new Error('q must be 1') },
      },
    ),
  };
  assert.deepEqual(await validateInput(custom, { q: 2 }), { ok: false, detail: 'q must be 1' });
  assert.deepEqual(await validateInput(bare, ['not', 'an', 'object']), {
    ok: false,
    detail: 'the input must be a JSON object, and it was ["not","an","object"].',
  });
});

test('toModelPrompt: leading system turns join the instructions; a later one becomes a marked user turn', () => {
  const prompt = toModelPrompt(
    [
      { role: 'system', content: [{ type: 'text', text: 'Recorded rules.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'system', content: [{ type: 'text', text: 'Budget is low.' }] },
    ],
    'Be brief.',
  );
  assert.equal(prompt.instructions, 'Be brief.\n\nRecorded rules.');
  assert.deepEqual(prompt.messages, [
    { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
    { role: 'user', content: [{ type: 'text', text: '[system] Budget is low.' }] },
  ]);
  assert.deepEqual(toModelPrompt([{ role: 'user', content: [] }]), {
    messages: [{ role: 'user', content: [] }],
  });
});

test('a recorded conversation with system turns runs (the AI SDK refuses them in messages)', () =>
  withFreshSession(async (fixture) => {
    const bodies = [
      { role: 'system' as const, text: 'Recorded rules.' },
      { role: 'user' as const, text: 'Hi' },
    ];
    const messages = [];
    for (const { role, text } of bodies) {
      const content = [{ type: 'text' as const, text }];
      const record = await fixture.session.append({ type: 'message', role, content });
      messages.push({ role, content, seq: record.seq });
    }
    const model = new ScriptedModel([{ text: 'Hello.' }]);
    const result = await new Loop({ backends: [model.model], writer: fixture.session }).run(
      messages,
    );
    assert.equal(result.status, 'finished', result.error);
    assert.deepEqual(model.prompts[0]?.[0], { role: 'system', content: 'Recorded rules.' });
  }));
