import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonSchema } from 'ai';
import { z } from 'zod';
import { Loop } from '../../src/loop/loop.ts';
import type { ToolDefinition } from '../../src/loop/types.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { pairingViolations } from '../../src/transcript/pairing-violations.ts';
import { latch } from '../support/latch.ts';
import {
  assertWriteOrder,
  collectEvents,
  echoTool,
  freshSession,
  type LogEntry,
  RecordingFileSystem,
  recordsOf,
  shapeOf,
  withFreshSession,
} from './support/harness.ts';
import { ScriptedModel } from '../../src/testing/index.ts';

test('a fresh run: user turn, tool call, result, final answer, in write order', async () => {
  const log: LogEntry[] = [];
  const fileSystem = new RecordingFileSystem(log);
  const fixture = await freshSession(fileSystem);
  try {
    const model = new ScriptedModel([
      { text: 'Let me echo.', calls: [{ id: 'call_1', name: 'echo', input: { text: 'hi' } }] },
      { text: 'It said hi.' },
    ]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [echoTool(log)],
      system: 'Be brief.',
    });
    const run = loop.start('Echo hi, please.');
    const events = await collectEvents(run);
    const result = await run;
    assert.equal(result.status, 'finished');
    assert.equal(result.text, 'It said hi.');
    assert.equal(result.stopReason, 'stop');
    assert.deepEqual(result.usage, { inputTokens: 20, outputTokens: 10 });
    assert.deepEqual(model.violations, []);
    assert.equal(model.remaining, 0);

    const records = await recordsOf(fixture.path);
    assert.deepEqual(shapeOf(records), [
      'session-meta',
      'user(text)',
      'assistant(text,tool-call:call_1)',
      'tool-dispatched:call_1',
      'tool(tool-result:call_1)',
      'tool-settled:call_1',
      'assistant(text)',
    ]);
    const dispatch = records.find((record) => record.type === 'tool-dispatched');
    assert.ok(dispatch?.type === 'tool-dispatched');
    assert.equal(dispatch.idempotency, 'read-only');
    assert.match(dispatch.inputDigest, /^sha256:[0-9a-f]{64}$/);
    assert.equal(assertWriteOrder(log), 1);

    // The second prompt carries the system prompt, the call and its result.
    const second = model.prompts[1];
    assert.ok(second !== undefined);
    assert.deepEqual(
      second.map((message) => message.role),
      ['system', 'user', 'assistant', 'tool'],
    );
    assert.deepEqual(pairingViolations(conversationView(records)), []);

    const types = events.map((event) => event.type);
    assert.deepEqual(
      types.filter((type) => type !== 'text-delta'),
      [
        'turn-start',
        'turn-end',
        'tool-call-start',
        'tool-call-end',
        'turn-start',
        'turn-end',
        'run-end',
      ],
    );
    assert.equal(
      events.flatMap((event) => (event.type === 'text-delta' ? [event.text] : [])).join(''),
      'Let me echo.It said hi.',
    );
  } finally {
    await fixture.close();
  }
});

test('parallel calls run concurrently; each result is its own record; the model gets them together in call order', async () => {
  const log: LogEntry[] = [];
  const fixture = await freshSession(new RecordingFileSystem(log));
  try {
    const { promise: fastStarted, release: releaseSlow } = latch();
    const slow: ToolDefinition<{ text: string }> = {
      name: 'slow',
      description: 'Waits until fast has run',
      inputSchema: z.object({ text: z.string() }),
      idempotency: 'side-effect',
      async execute({ text }, { callId }) {
        log.push({ kind: 'effect', callId, what: 'start' });
        // Would never resolve if the calls ran one after the other.
        await fastStarted;
        return `slow ${text}`;
      },
    };
    const fast: ToolDefinition<{ text: string }> = {
      name: 'fast',
      description: 'Returns at once',
      inputSchema: z.object({ text: z.string() }),
      idempotency: 'idempotent',
      async execute({ text }, { callId }) {
        log.push({ kind: 'effect', callId, what: 'start' });
        releaseSlow();
        return { fast: text };
      },
    };
    const model = new ScriptedModel([
      {
        calls: [
          { id: 'a', name: 'slow', input: { text: '1' } },
          { id: 'b', name: 'fast', input: { text: '2' } },
        ],
      },
      { text: 'Both done.' },
    ]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [slow, fast],
    });
    const result = await loop.start('Go');
    assert.equal(result.status, 'finished');
    const records = await recordsOf(fixture.path);
    const shape = shapeOf(records);
    // b finished first, so its result and settle come first in the file.
    assert.ok(shape.indexOf('tool(tool-result:b)') < shape.indexOf('tool(tool-result:a)'));
    assert.equal(shape.filter((entry) => entry.startsWith('tool(')).length, 2);
    assert.equal(assertWriteOrder(log), 2);
    assert.deepEqual(model.violations, []);
    const toolMessage = model.prompts[1]?.find((message) => message.role === 'tool');
    assert.ok(toolMessage?.role === 'tool');
    assert.deepEqual(
      toolMessage.content.map((part) => (part.type === 'tool-result' ? part.toolCallId : '')),
      ['a', 'b'],
    );
    const dispatches = records.filter((record) => record.type === 'tool-dispatched');
    assert.deepEqual(
      dispatches.map((record) => (record.type === 'tool-dispatched' ? record.idempotency : '')),
      ['side-effect', 'idempotent'],
    );
  } finally {
    await fixture.close();
  }
});

test('a throwing tool and a ToolFailure become error results the model reads; settles say failed', () =>
  withFreshSession(async (fixture) => {
    const throwing: ToolDefinition<Record<string, never>> = {
      name: 'explode',
      description: 'Throws',
      inputSchema: z.object({}),
      idempotency: 'side-effect',
      async execute() {
        throw new Error('disk on fire');
      },
    };
    const failing: ToolDefinition<Record<string, never>> = {
      name: 'refuse',
      description: 'Fails politely',
      inputSchema: jsonSchema({ type: 'object', properties: {} }),
      idempotency: 'read-only',
      async execute() {
        return { isError: true, output: { reason: 'not allowed' } };
      },
    };
    const model = new ScriptedModel([
      {
        calls: [
          { id: 'x', name: 'explode', input: {} },
          { id: 'y', name: 'refuse', input: {} },
        ],
      },
      { text: 'Both failed.' },
    ]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [throwing, failing],
    });
    const run = loop.start('Try both');
    const events = await collectEvents(run);
    assert.equal((await run).status, 'finished');
    const toolMessage = model.prompts[1]?.find((message) => message.role === 'tool');
    assert.ok(toolMessage?.role === 'tool');
    const outputs = toolMessage.content.map((part) =>
      part.type === 'tool-result' ? part.output : null,
    );
    assert.deepEqual(outputs, [
      { type: 'error-text', value: 'The tool failed: disk on fire' },
      { type: 'error-json', value: { reason: 'not allowed' } },
    ]);
    const settles = (await recordsOf(fixture.path)).filter(
      (record) => record.type === 'tool-settled',
    );
    assert.deepEqual(
      settles.map((record) => (record.type === 'tool-settled' ? record.status : '')),
      ['failed', 'failed'],
    );
    const ends = events.filter((event) => event.type === 'tool-call-end');
    assert.deepEqual(
      ends.map((event) => (event.type === 'tool-call-end' ? event.isError : null)),
      [true, true],
    );
  }));

test('invalid input, malformed JSON and unknown tools are answered with errors, never dispatched, never run', async () => {
  const log: LogEntry[] = [];
  const fixture = await freshSession();
  try {
    const model = new ScriptedModel([
      {
        calls: [
          { id: 'bad', name: 'echo', input: { text: 42 } },
          { id: 'torn', name: 'echo', input: null, rawInput: '{"text": "unfinished' },
          { id: 'ghost', name: 'teleport', input: { where: 'mars' } },
          { id: 'good', name: 'echo', input: { text: 'ok' } },
        ],
      },
      { text: 'Noted.' },
    ]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [echoTool(log)],
    });
    const result = await loop.start('Try');
    assert.equal(result.status, 'finished');
    assert.deepEqual(model.violations, []);
    const records = await recordsOf(fixture.path);
    const dispatched = records.flatMap((record) =>
      record.type === 'tool-dispatched' ? [record.callId] : [],
    );
    assert.deepEqual(dispatched, ['good']);
    assert.deepEqual(
      log.flatMap((entry) => (entry.kind === 'effect' ? [entry.callId] : [])),
      ['good'],
    );
    const toolMessage = model.prompts[1]?.find((message) => message.role === 'tool');
    assert.ok(toolMessage?.role === 'tool');
    const byId = new Map(
      toolMessage.content.map((part) =>
        part.type === 'tool-result' ? [part.toolCallId, part.output] : ['', null],
      ),
    );
    const bad = byId.get('bad');
    assert.ok(bad?.type === 'error-text');
    assert.match(bad.value, /^Invalid input for tool "echo", so it was not run: /);
    const torn = byId.get('torn');
    assert.ok(torn?.type === 'error-text');
    assert.match(torn.value, /must be a JSON object, and it was "\{\\"text\\": \\"unfinished"/);
    const ghost = byId.get('ghost');
    assert.ok(ghost?.type === 'error-text');
    assert.match(ghost.value, /no tool named "teleport".*Available tools: echo/);
    assert.deepEqual(byId.get('good'), { type: 'text', value: 'echo: ok' });
    // The malformed call's input is kept verbatim on disk, and sent to providers as {}.
    const assistant = records.find(
      (record) => record.type === 'message' && record.role === 'assistant',
    );
    assert.ok(assistant?.type === 'message');
    const tornCall = assistant.content.find(
      (part) => part.type === 'tool-call' && part.callId === 'torn',
    );
    assert.ok(tornCall?.type === 'tool-call');
    assert.equal(tornCall.input, '{"text": "unfinished');
    const sent = model.prompts[1]?.find((message) => message.role === 'assistant');
    assert.ok(sent?.role === 'assistant');
    const sentTorn = sent.content.find(
      (part) => part.type === 'tool-call' && part.toolCallId === 'torn',
    );
    assert.ok(sentTorn?.type === 'tool-call');
    assert.deepEqual(sentTorn.input, {});
  } finally {
    await fixture.close();
  }
});

test('a run stops after maxTurns with its last results recorded, and the transcript can carry on', () =>
  withFreshSession(async (fixture) => {
    const model = new ScriptedModel([
      { calls: [{ id: 'c1', name: 'echo', input: { text: '1' } }] },
      { calls: [{ id: 'c2', name: 'echo', input: { text: '2' } }] },
    ]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [echoTool([])],
      maxTurns: 2,
    });
    const result = await loop.start('Loop');
    assert.equal(result.status, 'max-turns');
    const shape = shapeOf(await recordsOf(fixture.path));
    assert.equal(shape.at(-1), 'tool-settled:c2');
  }));

test('start refuses a session that already holds a conversation', () =>
  withFreshSession(async (fixture) => {
    await fixture.session.appendDurable({
      type: 'message',
      role: 'user',
      content: [{ type: 'text', text: 'earlier' }],
    });
    const loop = new Loop({ backends: [new ScriptedModel([]).model], writer: fixture.session });
    assert.throws(() => loop.start('again'), TypeError);
    assert.throws(() => new Loop({ backends: [], writer: fixture.session }), TypeError);
  }));

test('a tool whose idempotency a reader would refuse is refused before anything is written', () =>
  withFreshSession(async (fixture) => {
    const before = await recordsOf(fixture.path);
    const tool = { ...echoTool([]), idempotency: 'unsafe' } as unknown as ToolDefinition;
    assert.throws(
      () =>
        new Loop({
          backends: [new ScriptedModel([]).model],
          writer: fixture.session,
          tools: [tool],
        }),
      (error: unknown) =>
        error instanceof TypeError &&
        error.message.includes('"echo"') &&
        error.message.includes('"unsafe"') &&
        error.message.includes('side-effect'),
    );
    assert.deepEqual(await recordsOf(fixture.path), before);
  }));
