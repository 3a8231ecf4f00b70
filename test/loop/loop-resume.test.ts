import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inputDigest } from '../../src/loop/input-digest.ts';
import { Loop } from '../../src/loop/loop.ts';
import type { JoinResolver } from '../../src/loop/types.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { pairingViolations } from '../../src/transcript/pairing-violations.ts';
import type { JsonValue, RecordBody } from '../../src/transcript/records.ts';
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
  withFreshSession,
} from './support/harness.ts';
import { ScriptedModel } from '../../src/testing/index.ts';

const user = (text: string, extras?: { injected: 'revival' }): RecordBody => ({
  type: 'message',
  role: 'user',
  content: [{ type: 'text', text }],
  ...(extras === undefined ? {} : { extras }),
});

const callTurn = (...calls: [id: string, name: string, input: object][]): RecordBody => ({
  type: 'message',
  role: 'assistant',
  content: calls.map(([callId, toolName, input]) => ({
    type: 'tool-call' as const,
    callId,
    toolName,
    input: input as { [key: string]: string },
  })),
});

/** The dispatch record of a read-only call, as the Loop writes it (`joins` only when given). */
const dispatched = (
  callId: string,
  toolName: string,
  input: JsonValue,
  joins?: string[],
): RecordBody => ({
  type: 'tool-dispatched',
  callId,
  toolName,
  inputDigest: inputDigest(input),
  idempotency: 'read-only',
  ...(joins === undefined ? {} : { joins }),
});

/**
 * Write `bodies` after a session-meta, close the writer (the process "dies"), reopen the
 * transcript as a reviver would, and hand back the session and the conversation view.
 */
async function transcriptWith(bodies: RecordBody[], log?: LogEntry[]) {
  const fixture = await freshSession();
  for (const body of bodies) await fixture.session.append(body);
  await fixture.session.close();
  const session = await Session.open(
    fixture.path,
    log === undefined ? {} : { fileSystem: new RecordingFileSystem(log) },
  );
  const messages = conversationView(await recordsOf(fixture.path));
  return {
    ...fixture,
    session,
    messages,
    async close() {
      await session.close().catch(() => undefined);
      await fixture.close();
    },
  };
}

test('resume, answered: every call has its result, so the loop calls the model at once', async () => {
  const log: LogEntry[] = [];
  const fixture = await transcriptWith([
    user('Echo x'),
    callTurn(['c1', 'echo', { text: 'x' }]),
    dispatched('c1', 'echo', { text: 'x' }),
    {
      type: 'message',
      role: 'tool',
      content: [
        { type: 'tool-result', callId: 'c1', toolName: 'echo', output: 'x', isError: false },
      ],
    },
    { type: 'tool-settled', callId: 'c1', status: 'completed' },
  ]);
  try {
    const model = new ScriptedModel([{ text: 'Done: x' }]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [echoTool(log)],
    });
    const result = await loop.run(fixture.messages);
    assert.equal(result.status, 'finished');
    assert.equal(result.text, 'Done: x');
    assert.deepEqual(log, [], 'the tool did not run again');
    assert.deepEqual(model.violations, []);
    const shape = shapeOf(await recordsOf(fixture.path));
    assert.equal(shape.filter((entry) => entry.startsWith('tool-dispatched')).length, 1);
    assert.equal(shape.at(-1), 'assistant(text)');
  } finally {
    await fixture.close();
  }
});

test('resume, not yet run: calls never dispatched are dispatched and run once, then the model', async () => {
  const log: LogEntry[] = [];
  const fixture = await transcriptWith(
    [
      user('Echo twice'),
      callTurn(['c1', 'echo', { text: 'one' }], ['c2', 'echo', { text: 'two' }]),
      // c1 was dispatched and answered before the crash; c2 never was.
      dispatched('c1', 'echo', { text: 'one' }),
      {
        type: 'message',
        role: 'tool',
        content: [
          { type: 'tool-result', callId: 'c1', toolName: 'echo', output: 'one', isError: false },
        ],
      },
      { type: 'tool-settled', callId: 'c1', status: 'completed' },
    ],
    log,
  );
  try {
    const model = new ScriptedModel([{ text: 'Both echoed.' }]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [echoTool(log)],
    });
    const result = await loop.run(fixture.messages);
    assert.equal(result.status, 'finished');
    assert.deepEqual(
      log.flatMap((entry) => (entry.kind === 'effect' ? [entry.callId] : [])),
      ['c2'],
    );
    assert.equal(assertWriteOrder(log), 1);
    assert.deepEqual(model.violations, []);
    const records = await recordsOf(fixture.path);
    assert.deepEqual(shapeOf(records).slice(-4), [
      'tool-dispatched:c2',
      'tool(tool-result:c2)',
      'tool-settled:c2',
      'assistant(text)',
    ]);
    assert.deepEqual(pairingViolations(conversationView(records)), []);
  } finally {
    await fixture.close();
  }
});

test('resume, pending-again: an open join is awaited under the same call id, with no second dispatch', async () => {
  const fixture = await transcriptWith([
    user('Start a child and wait'),
    callTurn(['w1', 'task_wait', { agentIds: ['child-1'] }]),
    dispatched('w1', 'task_wait', { agentIds: ['child-1'] }, ['child-1']),
    // What revival appends: the resume notice, after the open join.
    user('[background event] resumed', { injected: 'revival' }),
  ]);
  try {
    const asked: Parameters<JoinResolver>[0][] = [];
    const resolveJoin: JoinResolver = async (join) => {
      asked.push(join);
      return { output: { 'child-1': 'the answer is 42' }, isError: false };
    };
    const model = new ScriptedModel([{ text: 'The child says 42.' }]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [waitTool],
      resolveJoin,
    });
    const result = await loop.run(fixture.messages);
    assert.equal(result.status, 'finished');
    assert.equal(asked.length, 1);
    assert.equal(asked[0]?.callId, 'w1');
    assert.deepEqual(asked[0]?.agentIds, ['child-1']);
    const records = await recordsOf(fixture.path);
    const shape = shapeOf(records);
    assert.equal(shape.filter((entry) => entry === 'tool-dispatched:w1').length, 1);
    assert.deepEqual(shape.slice(-3), [
      'tool(tool-result:w1)',
      'tool-settled:w1',
      'assistant(text)',
    ]);
    // The model saw the result right after its call, and the notice after the result.
    assert.deepEqual(model.violations, []);
    assert.deepEqual(
      model.prompts[0]?.map((message) => message.role),
      ['user', 'assistant', 'tool', 'user'],
    );
    assert.deepEqual(pairingViolations(conversationView(records)), []);
  } finally {
    await fixture.close();
  }
});

test('a pending join with no resolver, and an in-flight call nobody revived, fail the run without writing', async () => {
  for (const joins of [['child-1'], undefined]) {
    const fixture = await transcriptWith([
      user('Go'),
      callTurn(['w1', 'task_wait', { agentIds: ['child-1'] }]),
      dispatched('w1', 'task_wait', { agentIds: ['child-1'] }, joins),
    ]);
    try {
      const before = (await recordsOf(fixture.path)).length;
      const model = new ScriptedModel([]);
      const loop = new Loop({
        backends: [model.model],
        writer: fixture.session,
        tools: [waitTool],
      });
      const result = await loop.run(fixture.messages);
      assert.equal(result.status, 'failed');
      assert.match(
        result.error ?? '',
        joins === undefined ? /revive the transcript/ : /resolveJoin/,
      );
      assert.equal((await recordsOf(fixture.path)).length, before);
      assert.equal(model.prompts.length, 0);
    } finally {
      await fixture.close();
    }
  }
});

test('a conversation that already ended is finished without a model call', async () => {
  const fixture = await transcriptWith([
    user('Hi'),
    { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Hello!' }] },
  ]);
  try {
    const model = new ScriptedModel([]);
    const loop = new Loop({ backends: [model.model], writer: fixture.session });
    const result = await loop.run(fixture.messages);
    assert.equal(result.status, 'finished');
    assert.equal(result.text, 'Hello!');
    assert.equal(model.prompts.length, 0);
  } finally {
    await fixture.close();
  }
});

test('background deliveries wait for a safe point: never between a call and its result', () =>
  withFreshSession(async (fixture) => {
    const pending = [
      {
        role: 'user' as const,
        content: [{ type: 'text' as const, text: '[background event] child done' }],
        extras: { injected: 'background' as const },
      },
    ];
    let taken = 0;
    const takeDeliveries = () => {
      taken += 1;
      // Deliver only once the first turn's call exists, to prove it waits for the answer.
      return taken === 2 ? pending : [];
    };
    const model = new ScriptedModel([
      { calls: [{ id: 'c1', name: 'echo', input: { text: 'a' } }] },
      { text: 'Got it.' },
    ]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [echoTool([])],
      takeDeliveries,
    });
    assert.equal((await loop.start('Go')).status, 'finished');
    const shape = shapeOf(await recordsOf(fixture.path));
    assert.deepEqual(shape.slice(2), [
      'assistant(tool-call:c1)',
      'tool-dispatched:c1',
      'tool(tool-result:c1)',
      'tool-settled:c1',
      'user(text)',
      'assistant(text)',
    ]);
    assert.deepEqual(model.violations, []);
  }));

test('resume, mixed tail: a pending join and a never-dispatched sibling are answered together, each once', async () => {
  const log: LogEntry[] = [];
  const fixture = await transcriptWith(
    [
      user('Wait and echo'),
      callTurn(
        ['w1', 'task_wait', { agentIds: ['child-1'] }],
        ['c2', 'echo', { text: 'meanwhile' }],
      ),
      dispatched('w1', 'task_wait', { agentIds: ['child-1'] }, ['child-1']),
      user('[background event] resumed', { injected: 'revival' }),
    ],
    log,
  );
  try {
    let joins = 0;
    const model = new ScriptedModel([{ text: 'Both answered.' }]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [waitTool, echoTool(log)],
      resolveJoin: async () => {
        joins += 1;
        return { output: 'child-1 done', isError: false };
      },
    });
    assert.equal((await loop.run(fixture.messages)).status, 'finished');
    assert.equal(joins, 1);
    assert.deepEqual(
      log.flatMap((entry) => (entry.kind === 'effect' ? [entry.callId] : [])),
      ['c2'],
    );
    assert.equal(assertWriteOrder(log), 1);
    const shape = shapeOf(await recordsOf(fixture.path));
    assert.equal(shape.filter((entry) => entry.startsWith('tool-dispatched')).length, 2);
    assert.deepEqual(model.violations, []);
    assert.deepEqual(
      model.prompts[0]?.map((message) => message.role),
      ['user', 'assistant', 'tool', 'user'],
    );
  } finally {
    await fixture.close();
  }
});

test('abort while a pending join waits: it stays pending (no result, no settle), and the next run waits again', async () => {
  const fixture = await transcriptWith([
    user('Wait'),
    callTurn(['w1', 'task_wait', { agentIds: ['child-1'] }]),
    dispatched('w1', 'task_wait', { agentIds: ['child-1'] }, ['child-1']),
  ]);
  try {
    const waiting: JoinResolver = ({ signal }) =>
      new Promise((_resolve, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason));
      });
    const loop = new Loop({
      backends: [new ScriptedModel([]).model],
      writer: fixture.session,
      tools: [waitTool],
      resolveJoin: waiting,
    });
    const run = loop.run(fixture.messages);
    for await (const event of run) {
      if (event.type === 'join-wait-start') run.abort();
    }
    assert.equal((await run).status, 'aborted');
    const before = shapeOf(await recordsOf(fixture.path));
    assert.deepEqual(before.slice(-2), ['tool-dispatched:w1', 'run-stopped']);
    assert.deepEqual(
      fixture.session.state.open.map((dispatch) => dispatch.callId),
      ['w1'],
    );
    const model = new ScriptedModel([{ text: 'Child done.' }]);
    const again = await new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [waitTool],
      resolveJoin: async () => ({ output: 'done', isError: false }),
    }).run(fixture.messages);
    assert.equal(again.status, 'finished');
    const after = shapeOf(await recordsOf(fixture.path));
    assert.equal(after.filter((entry) => entry === 'tool-dispatched:w1').length, 1);
    assert.deepEqual(after.slice(-3), [
      'tool(tool-result:w1)',
      'tool-settled:w1',
      'assistant(text)',
    ]);
  } finally {
    await fixture.close();
  }
});

test('a conversation the providers would refuse (a call left unanswered mid-history) fails the run before any request, writing nothing', async () => {
  const fixture = await transcriptWith([
    user('First'),
    callTurn(['old', 'echo', { text: 'never answered' }]),
    user('Second'),
    { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Hm.' }] },
    user('Third'),
  ]);
  try {
    const before = (await recordsOf(fixture.path)).length;
    const model = new ScriptedModel([{ text: 'never' }]);
    const result = await new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [echoTool([])],
    }).run(fixture.messages);
    assert.equal(result.status, 'failed');
    assert.match(result.error ?? '', /cannot be sent: message 1: .*old/);
    assert.equal(model.prompts.length, 0);
    assert.equal((await recordsOf(fixture.path)).length, before);
  } finally {
    await fixture.close();
  }
});
