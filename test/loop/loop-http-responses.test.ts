import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { defaultSettingsMiddleware, type LanguageModel, wrapLanguageModel } from 'ai';
import { Loop } from '../../src/loop/loop.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { Session } from '../../src/transcript/session.ts';
import {
  assertWriteOrder,
  collectEvents,
  echoTool,
  freshSession,
  type LogEntry,
  RecordingFileSystem,
  recordsOf,
  shapeOf,
} from './support/harness.ts';
import { type ResponsesStep, startResponsesServer } from '../../src/testing/index.ts';
import type { ResponsesServer } from '../../src/testing/responses-server.ts';

/*
 * The real Loop over real HTTP against a scripted OpenAI Responses API: what `openai('gpt-5')`
 * of @ai-sdk/openai speaks by default. gpt-5 is a reasoning model, so every turn carries a
 * reasoning item that must come back on the next request: by `item_reference` when the
 * response was stored (the default), or inline with its encrypted content when `store: false`.
 */

const responsesModel = (url: string) => createOpenAI({ baseURL: url, apiKey: 'test' })('gpt-5');

/** gpt-5 with `store: false`, as an application sets it: a middleware adding provider options. */
const statelessModel = (url: string): LanguageModel =>
  wrapLanguageModel({
    model: responsesModel(url),
    middleware: defaultSettingsMiddleware({
      settings: { providerOptions: { openai: { store: false } } },
    }),
  });

type Item = Record<string, unknown>;

function inputOf(server: ResponsesServer, index: number): Item[] {
  const input = server.requests[index]?.input;
  assert.ok(Array.isArray(input), `request ${index} has an input`);
  return input as Item[];
}

/** An input as a list of short labels: `ref:<id>`, `reasoning:<id>`, `fc:<call>`, `out:<call>`, or the role. */
function labels(input: readonly Item[]): string[] {
  return input.map((item) => {
    switch (item.type) {
      case 'item_reference':
        return `ref:${String(item.id)}`;
      case 'reasoning':
        return `reasoning:${String(item.id)}`;
      case 'function_call':
        return `fc:${String(item.call_id)}`;
      case 'function_call_output':
        return `out:${String(item.call_id)}`;
      default:
        return String(item.role);
    }
  });
}

function outputOf(input: readonly Item[], callId: string): unknown {
  return input.find((item) => item.type === 'function_call_output' && item.call_id === callId)
    ?.output;
}

/** The id of the message item a server produced in its n-th response (1-based). */
function messageId(server: ResponsesServer, response: number): string {
  const id = [...server.items].find(
    ([, item]) => item.type === 'message' && item.response === response,
  )?.[0];
  assert.ok(id !== undefined, `response ${response} produced a message`);
  return id;
}

/** The three-turn run of the main tests: reasoning every turn, parallel calls, an unknown tool. */
const threeTurns = (prefix: string): ResponsesStep[] => [
  {
    reasoning: { id: `rs_${prefix}1`, summary: ['Two echoes, in parallel.'] },
    text: 'Echoing.',
    calls: [
      { id: 'call_a', name: 'echo', input: { text: 'one' } },
      { id: 'call_b', name: 'echo', input: { text: 'two' } },
    ],
  },
  {
    reasoning: { id: `rs_${prefix}2`, summary: ['One more.'] },
    calls: [{ id: 'call_c', name: 'bogus', input: {} }],
  },
  { reasoning: { id: `rs_${prefix}3` }, text: 'Done.' },
];

/**
 * After the run finished: append a user turn and carry on from what the transcript holds, as
 * a revived run does. The request must replay every earlier item exactly as the run itself
 * sent it (the same references or the same encrypted content, read back from disk).
 */
async function carryOnFromDisk(path: string, backend: LanguageModel): Promise<void> {
  const session = await Session.open(path);
  try {
    await session.appendDurable({
      type: 'message',
      role: 'user',
      content: [{ type: 'text', text: 'Once more?' }],
    });
    const result = await new Loop({
      backends: [backend],
      writer: session,
      tools: [echoTool([])],
      system: 'Be brief.',
    }).run(conversationView(await recordsOf(path)));
    assert.equal(result.status, 'finished', result.error);
  } finally {
    await session.close();
  }
}

test('the scripted Responses server really refuses broken inputs with OpenAI’s texts', async () => {
  const server = await startResponsesServer([
    {
      reasoning: { id: 'rs_t' },
      text: 'Calling.',
      calls: [{ id: 'call_1', name: 'f', input: {} }],
    },
    {
      reasoning: { id: 'rs_u', summary: ['Again.'] },
      calls: [{ id: 'call_2', name: 'f', input: {} }],
    },
    { text: 'Fine.' },
  ]);
  const user = { role: 'user', content: [{ type: 'input_text', text: 'hi' }] };
  const post = async (input: Item[], extra: Item = {}) => {
    const response = await fetch(`${server.url}/responses`, {
      method: 'POST',
      body: JSON.stringify({ model: 'gpt-5', stream: true, input, ...extra }),
    });
    if (response.headers.get('content-type') === 'text/event-stream') {
      return { status: response.status, message: await response.text() };
    }
    const body = (await response.json()) as { error: { message: string } };
    return { status: response.status, message: body.error.message };
  };
  try {
    // Two real turns: the first stored (the default), the second not, with encrypted content.
    assert.equal((await post([user])).status, 200);
    const stateless = { store: false, include: ['reasoning.encrypted_content'] };
    assert.equal((await post([user], stateless)).status, 200);
    const message = messageId(server, 1);
    const callItemId = [...server.items].find(([, item]) => item.callId === 'call_1')?.[0];
    const blob = server.items.get('rs_u')?.encryptedContent;
    assert.ok(blob !== undefined, 'the stateless turn carried encrypted content');
    assert.equal(server.items.get('rs_u')?.stored, false);
    const call1 = { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' };
    const output1 = { type: 'function_call_output', call_id: 'call_1', output: 'ok' };
    const turn1 = [
      { type: 'item_reference', id: 'rs_t' },
      { type: 'item_reference', id: message },
    ];

    assert.deepEqual(await post([user, ...turn1, call1]), {
      status: 400,
      message: 'No tool output found for function call call_1.',
    });
    assert.deepEqual(
      await post([user, { type: 'function_call_output', call_id: 'call_9', output: 'x' }]),
      { status: 400, message: 'No tool call found for function call output with call_id call_9.' },
    );
    assert.deepEqual(await post([user, { type: 'item_reference', id: 'rs_t' }, user]), {
      status: 400,
      message: "Item 'rs_t' of type 'reasoning' was provided without its required following item.",
    });
    assert.deepEqual(await post([user, { ...call1, id: callItemId }, output1]), {
      status: 400,
      message: `Item '${callItemId}' of type 'function_call' was provided without its required 'reasoning' item: 'rs_t'.`,
    });
    assert.deepEqual(await post([user, { type: 'item_reference', id: 'rs_u' }], { store: false }), {
      status: 404,
      message:
        "Item with id 'rs_u' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
    });
    const call2 = { type: 'function_call', call_id: 'call_2', name: 'f', arguments: '{}' };
    const output2 = { type: 'function_call_output', call_id: 'call_2', output: 'ok' };
    const forged = { type: 'reasoning', id: 'rs_u', encrypted_content: 'forged', summary: [] };
    assert.deepEqual(await post([user, forged, call2, output2]), {
      status: 400,
      message: 'The encrypted content for item rs_u could not be verified.',
    });
    assert.equal(server.rejections.length, 6);
    // The same turns replayed properly are accepted.
    const inline = { type: 'reasoning', id: 'rs_u', encrypted_content: blob, summary: [] };
    const valid = await post([user, ...turn1, call1, output1, inline, call2, output2]);
    assert.equal(valid.status, 200, valid.message);
    assert.equal(server.rejections.length, 6);
    assert.equal(server.remaining(), 0);
  } finally {
    await server.close();
  }
});

test('Responses over HTTP: reasoning replayed by reference before the calls, both outputs sent, an unknown tool answered as an error', async () => {
  const log: LogEntry[] = [];
  const fixture = await freshSession(new RecordingFileSystem(log));
  const server = await startResponsesServer([...threeTurns('r'), { text: 'Once more: done.' }]);
  try {
    const loop = new Loop({
      backends: [responsesModel(server.url)],
      writer: fixture.session,
      tools: [echoTool(log)],
      system: 'Be brief.',
    });
    const result = await loop.start('Echo one and two.');
    assert.equal(result.status, 'finished', result.error);
    assert.equal(result.text, 'Done.');
    assert.deepEqual(server.rejections, []);
    assert.equal(server.requests.length, 3);
    assert.equal(assertWriteOrder(log), 2);
    for (const request of server.requests) assert.equal(request.store, undefined);

    // The reasoning item comes back by reference, with the message it preceded, before the calls.
    const second = inputOf(server, 1);
    assert.deepEqual(labels(second), [
      'developer',
      'user',
      'ref:rs_r1',
      `ref:${messageId(server, 1)}`,
      'fc:call_a',
      'fc:call_b',
      'out:call_a',
      'out:call_b',
    ]);
    assert.equal(outputOf(second, 'call_a'), 'echo: one');
    assert.equal(outputOf(second, 'call_b'), 'echo: two');

    // The unknown tool: answered as an error result, never dispatched, never run.
    const third = inputOf(server, 2);
    assert.deepEqual(labels(third).slice(8), ['ref:rs_r2', 'fc:call_c', 'out:call_c']);
    const unknown = JSON.parse(String(outputOf(third, 'call_c'))) as { error: string };
    assert.match(unknown.error, /There is no tool named "bogus"/);
    const records = await recordsOf(fixture.path);
    assert.ok(!shapeOf(records).includes('tool-dispatched:call_c'));
    assert.deepEqual(
      log.flatMap((entry) => (entry.kind === 'effect' ? [entry.callId] : [])),
      ['call_a', 'call_b'],
    );

    // Carried on from the transcript: the same references, read back from disk.
    await fixture.session.close();
    await carryOnFromDisk(fixture.path, responsesModel(server.url));
    assert.deepEqual(server.rejections, []);
    assert.equal(server.remaining(), 0);
    assert.deepEqual(inputOf(server, 3), [
      ...third,
      { type: 'item_reference', id: 'rs_r3' },
      { type: 'item_reference', id: messageId(server, 3) },
      { role: 'user', content: [{ type: 'input_text', text: 'Once more?' }] },
    ]);
  } finally {
    await fixture.close();
    await server.close();
  }
});

test('Responses over HTTP with store: false: reasoning replayed inline with its id and the same encrypted content', async () => {
  const log: LogEntry[] = [];
  const fixture = await freshSession(new RecordingFileSystem(log));
  const server = await startResponsesServer([...threeTurns('s'), { text: 'Once more: done.' }]);
  try {
    const result = await new Loop({
      backends: [statelessModel(server.url)],
      writer: fixture.session,
      tools: [echoTool(log)],
      system: 'Be brief.',
    }).start('Echo one and two.');
    assert.equal(result.status, 'finished', result.error);
    assert.equal(result.text, 'Done.');
    assert.deepEqual(server.rejections, []);
    assert.equal(assertWriteOrder(log), 2);
    for (const request of server.requests) {
      assert.equal(request.store, false);
      assert.deepEqual(request.include, ['reasoning.encrypted_content']);
    }
    const encrypted = (id: string) => {
      const blob = server.items.get(id)?.encryptedContent;
      assert.ok(blob !== undefined && server.items.get(id)?.stored === false);
      return blob;
    };
    const second = inputOf(server, 1);
    assert.deepEqual(labels(second), [
      'developer',
      'user',
      'reasoning:rs_s1',
      'assistant',
      'fc:call_a',
      'fc:call_b',
      'out:call_a',
      'out:call_b',
    ]);
    assert.deepEqual(second[2], {
      type: 'reasoning',
      id: 'rs_s1',
      encrypted_content: encrypted('rs_s1'),
      summary: [{ type: 'summary_text', text: 'Two echoes, in parallel.' }],
    });
    const third = inputOf(server, 2);
    assert.deepEqual(labels(third).slice(8), ['reasoning:rs_s2', 'fc:call_c', 'out:call_c']);
    assert.equal(third[8]?.encrypted_content, encrypted('rs_s2'));
    assert.match(String(outputOf(third, 'call_c')), /There is no tool named \\"bogus\\"/);

    await fixture.session.close();
    await carryOnFromDisk(fixture.path, statelessModel(server.url));
    assert.deepEqual(server.rejections, []);
    assert.equal(server.remaining(), 0);
    assert.deepEqual(inputOf(server, 3), [
      ...third,
      { type: 'reasoning', id: 'rs_s3', encrypted_content: encrypted('rs_s3'), summary: [] },
      { role: 'assistant', content: 'Done.' },
      { role: 'user', content: [{ type: 'input_text', text: 'Once more?' }] },
    ]);
  } finally {
    await fixture.close();
    await server.close();
  }
});

test('Responses over HTTP: a 503 fails over to the second backend, which finishes the run', async () => {
  const log: LogEntry[] = [];
  const fixture = await freshSession(new RecordingFileSystem(log));
  // The first backend is down for the whole run: it answers every request with a 503.
  const down = await startResponsesServer([{ status: 503 }, { status: 503 }]);
  const up = await startResponsesServer([
    {
      reasoning: { id: 'rs_f1', summary: ['Echo it.'] },
      calls: [{ id: 'call_a', name: 'echo', input: { text: 'one' } }],
    },
    { reasoning: { id: 'rs_f2' }, text: 'Echoed.' },
  ]);
  try {
    const run = new Loop({
      backends: [responsesModel(down.url), responsesModel(up.url)],
      writer: fixture.session,
      tools: [echoTool(log)],
    }).start('Echo one.');
    const events = await collectEvents(run);
    const result = await run;
    assert.equal(result.status, 'finished', result.error);
    assert.equal(result.text, 'Echoed.');
    assert.equal(down.requests.length, 2, 'every turn really met the broken backend first');
    assert.equal(down.remaining(), 0);
    assert.equal(up.remaining(), 0);
    assert.deepEqual(up.rejections, []);
    assert.equal(assertWriteOrder(log), 1);
    const errors = events.filter((event) => event.type === 'model-error');
    assert.deepEqual(
      errors.map((event) => [event.backend, event.willRetry, /HTTP 503/.test(event.message)]),
      [
        [0, true, true],
        [0, true, true],
      ],
    );
    assert.deepEqual(labels(inputOf(up, 1)), ['user', 'ref:rs_f1', 'fc:call_a', 'out:call_a']);
  } finally {
    await fixture.close();
    await down.close();
    await up.close();
  }
});

test('Responses over HTTP: a stream that fails mid-answer (response.failed) or before its output (error) fails over', async () => {
  const fixture = await freshSession();
  const flaky = await startResponsesServer([
    {
      reasoning: { id: 'rs_lost' },
      text: 'Half an answer that never completes.',
      failure: {
        event: 'response.failed',
        after: 'output',
        code: 'server_error',
        message: 'The server had an error while processing your request.',
      },
    },
    {
      text: 'Never sent.',
      failure: { event: 'error', after: 'created', code: 'server_error', message: 'Overloaded.' },
    },
  ]);
  // The steady backend's first turn has no reasoning or text item, so the flaky one is sent no
  // reference to an item it never stored on turn 2 (that case is the last test below).
  const steady = await startResponsesServer([
    { calls: [{ id: 'call_a', name: 'echo', input: { text: 'one' } }] },
    { text: 'Echoed.' },
  ]);
  try {
    const run = new Loop({
      backends: [responsesModel(flaky.url), responsesModel(steady.url)],
      writer: fixture.session,
      tools: [echoTool([])],
    }).start('Echo one.');
    const events = await collectEvents(run);
    const result = await run;
    assert.equal(result.status, 'finished', result.error);
    assert.equal(result.text, 'Echoed.');
    assert.equal(flaky.remaining(), 0);
    assert.equal(steady.remaining(), 0);
    assert.deepEqual([...flaky.rejections, ...steady.rejections], []);
    const errors = events.filter((event) => event.type === 'model-error');
    assert.equal(errors.length, 2);
    assert.match(errors[0]?.message ?? '', /The server had an error while processing your request/);
    assert.match(errors[1]?.message ?? '', /Overloaded/);
    assert.ok(errors.every((event) => event.backend === 0 && event.willRetry));
    // Nothing of the failed attempt reached the transcript.
    const records = await recordsOf(fixture.path);
    assert.ok(!JSON.stringify(records).includes('Half an answer'));
  } finally {
    await fixture.close();
    await flaky.close();
    await steady.close();
  }
});

test('Responses over HTTP: after a failover, the first backend back up refuses item references it never stored, and the turn goes on to the backend that stored them', async () => {
  // Backend A is down for turn 1, so B answers it with a stored reasoning item. For turn 2 the
  // loop asks A first again; A is healthy, but has never seen rs_b (a different account or
  // deployment stores its own items) and answers 404. A refusal is not retried on A, but it
  // does not end the turn: B, which stored rs_b, finishes the run.
  const fixture = await freshSession();
  const first = await startResponsesServer([{ status: 503 }, { text: 'Done by A.' }]);
  const second = await startResponsesServer([
    {
      reasoning: { id: 'rs_b' },
      text: 'Echoing.',
      calls: [{ id: 'call_a', name: 'echo', input: { text: 'one' } }],
    },
    { text: 'Done by B.' },
  ]);
  try {
    const run = new Loop({
      backends: [responsesModel(first.url), responsesModel(second.url)],
      writer: fixture.session,
      tools: [echoTool([])],
    }).start('Echo one.');
    const events = await collectEvents(run);
    const result = await run;
    assert.equal(result.status, 'finished', result.error);
    assert.equal(result.text, 'Done by B.');
    assert.deepEqual(second.rejections, []);
    assert.equal(second.remaining(), 0);
    assert.equal(first.rejections.length, 1, 'A refused the references once');
    assert.match(first.rejections[0] ?? '', /Item with id 'rs_b' not found/);
    const errors = events.flatMap((event) => (event.type === 'model-error' ? [event] : []));
    assert.deepEqual(
      errors.map((event) => [event.backend, event.willRetry]),
      [
        [0, true],
        [0, true],
      ],
    );
    assert.match(errors[1]?.message ?? '', /HTTP 404/);
  } finally {
    await fixture.close();
    await first.close();
    await second.close();
  }
});
