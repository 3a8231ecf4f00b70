import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Output, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { Loop } from '../../src/loop/loop.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import type { Message } from '../../src/transcript/records.ts';
import { recordsOf, shapeOf, withFreshSession } from './support/harness.ts';

/*
 * The Loop takes the AI SDK's own tool shape — a ToolSet of tool() objects, the name its key —
 * and the options an AI SDK user reaches for: each is honoured, or refused by name when the loop
 * is built, before anything is written.
 */

const echo = (effects: string[]) =>
  tool({
    description: 'Echo the text back',
    inputSchema: z.object({ text: z.string() }),
    execute: async ({ text }, { toolCallId }) => {
      effects.push(`${toolCallId}:${text}`);
      return `echo: ${text}`;
    },
  });

test('new Loop({ tools: { name: tool(…) } }) runs: the key is the name, idempotency is declared beside it, side-effect when not', () =>
  withFreshSession(async (fixture) => {
    const effects: string[] = [];
    const model = new ScriptedModel([
      {
        calls: [
          { id: 'c1', name: 'echo', input: { text: 'hi' } },
          { id: 'c2', name: 'shout', input: { text: 'HI' } },
        ],
      },
      { text: 'Done.' },
    ]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: { echo: echo(effects), shout: echo(effects) },
      idempotency: { echo: 'read-only' },
    });
    const result = await loop.start('Echo hi.');
    assert.equal(result.status, 'finished', result.error);
    assert.deepEqual(effects.sort(), ['c1:hi', 'c2:HI']);
    assert.deepEqual(model.violations, []);
    const declared = (model.calls[0]?.tools ?? []).map((declaration) => declaration.name);
    assert.deepEqual(declared, ['echo', 'shout']);
    const records = await recordsOf(fixture.path);
    const dispatches = records.flatMap((record) =>
      record.type === 'tool-dispatched'
        ? [[record.toolName, record.idempotency, record.idempotencyDeclared]]
        : [],
    );
    // Undeclared is recorded as such, for the plans people read: assumed, not declared.
    assert.deepEqual(dispatches.sort(), [
      ['echo', 'read-only', undefined],
      ['shout', 'side-effect', false],
    ]);
    assert.ok(shapeOf(records).includes('tool(tool-result:c1)'));
  }));

test('toolChoice and activeTools reach the model as the AI SDK passes them, and an inactive tool is not run', () =>
  withFreshSession(async (fixture) => {
    const effects: string[] = [];
    const model = new ScriptedModel([
      { calls: [{ id: 'c1', name: 'shout', input: { text: 'x' } }] },
      { text: 'Done.' },
    ]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: { echo: echo(effects), shout: echo(effects) },
      activeTools: ['echo'],
      toolChoice: { type: 'tool', toolName: 'echo' },
    });
    const result = await loop.start('Go.');
    assert.equal(result.status, 'finished', result.error);
    assert.deepEqual(model.calls[0]?.toolChoice, { type: 'tool', toolName: 'echo' });
    assert.deepEqual(
      (model.calls[0]?.tools ?? []).map((declaration) => declaration.name),
      ['echo'],
    );
    assert.deepEqual(effects, [], 'the inactive tool never ran');
    const answer = JSON.stringify(model.prompts[1]);
    assert.match(answer, /There is no tool named \\"shout\\"/);
  }));

test('toolChoice as a string is passed as the provider type', () =>
  withFreshSession(async (fixture) => {
    const model = new ScriptedModel([{ text: 'Done.' }]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: { echo: echo([]) },
      toolChoice: 'none',
    });
    assert.equal((await loop.start('Go.')).status, 'finished');
    assert.deepEqual(model.calls[0]?.toolChoice, { type: 'none' });
  }));

test('AI SDK options the Loop does not take are refused by name, saying what to use instead', () =>
  withFreshSession(async (fixture) => {
    const model = new ScriptedModel([]);
    const base = { backends: [model.model], writer: fixture.session };
    const refusals: [Record<string, unknown>, RegExp][] = [
      [{ stopWhen: stepCountIs(3) }, /stopWhen is not supported: .*maxTurns/],
      [{ prepareStep: () => ({}) }, /prepareStep is not supported: prepareCall/],
      [{ onStepFinish: () => undefined }, /onStepFinish is not supported: .*events/],
      [{ output: Output.text() }, /output is not supported: structured output/],
      [{ experimental_repairToolCall: () => null }, /repairToolCall/],
      [{ activeTools: ['nope'] }, /activeTools names "nope"/],
      [
        { tools: { echo: echo([]) }, toolChoice: { type: 'tool', toolName: 'x' } },
        /toolChoice names "x"/,
      ],
      [{ tools: { echo: echo([]) }, idempotency: { other: 'read-only' } }, /names "other"/],
      // The option's name before 0.4, refused rather than ignored (the run would have no writer).
      [{ session: fixture.session }, /session is not supported: .*given as writer now/],
      [{ writer: undefined }, /`writer` is required/],
    ];
    for (const [extra, message] of refusals) {
      assert.throws(
        () => new Loop({ ...base, ...extra } as never),
        message,
        JSON.stringify(Object.keys(extra)),
      );
    }
  }));

test("a tool's context carries the Loop's writer as writer, and as session (its deprecated name)", () =>
  withFreshSession(async (fixture) => {
    const seen: { writer: unknown; session: unknown }[] = [];
    const model = new ScriptedModel([
      { calls: [{ id: 'c1', name: 'look', input: {} }] },
      { text: 'Done.' },
    ]);
    const result = await new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [
        {
          name: 'look',
          description: 'Look at the context',
          inputSchema: z.object({}),
          idempotency: 'read-only',
          execute: async (_input, context) => {
            seen.push({ writer: context.writer, session: context.session });
            return 'ok';
          },
        },
      ],
    }).start('Look.');
    assert.equal(result.status, 'finished', result.error);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.writer, fixture.session);
    assert.equal(seen[0]?.session, fixture.session);
  }));

test('tool() features the Loop cannot honour are refused by name', () =>
  withFreshSession(async (fixture) => {
    const base = { backends: [new ScriptedModel([]).model], writer: fixture.session };
    const schema = z.object({ text: z.string() });
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ inputSchema: schema }, /has no execute/],
      [{ inputSchema: schema, execute: async () => 'x', needsApproval: true }, /needsApproval/],
      [
        {
          inputSchema: schema,
          execute: async () => 'x',
          toModelOutput: () => ({ type: 'text', value: '' }),
        },
        /toModelOutput/,
      ],
      [
        { type: 'provider', id: 'openai.web_search', args: {}, inputSchema: schema },
        /executed by the provider/,
      ],
    ];
    for (const [definition, message] of cases) {
      assert.throws(() => new Loop({ ...base, tools: { t: definition as never } }), message);
    }
  }));

test('an image or file part is refused before anything is written: a transcript cannot store it', () =>
  withFreshSession(async (fixture) => {
    const loop = new Loop({ backends: [new ScriptedModel([]).model], writer: fixture.session });
    const withImage = {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image', image: new Uint8Array([1, 2, 3]) },
      ],
    } as unknown as Message;
    assert.throws(() => loop.start(withImage), /an image part cannot be stored in a transcript/);
    assert.throws(() => loop.run([withImage]), /an image part cannot be stored/);
    assert.equal(fixture.session.state.messages, 0);
  }));

test("a tool() that reads execute's messages is told the Loop does not pass them", () =>
  withFreshSession(async (fixture) => {
    const model = new ScriptedModel([
      { calls: [{ id: 'c1', name: 'peek', input: {} }] },
      { text: 'Done.' },
    ]);
    const peek = tool({
      inputSchema: z.object({}),
      execute: async (_input, { messages }) => messages.length,
    });
    const result = await new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: { peek },
    }).start('Go.');
    assert.equal(result.status, 'finished');
    assert.match(JSON.stringify(model.prompts[1]), /does not pass the conversation's messages/);
  }));
