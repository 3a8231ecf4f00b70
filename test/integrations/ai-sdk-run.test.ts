import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { generateText, stepCountIs, streamText, ToolLoopAgent, tool } from 'ai';
import { z } from 'zod';
import {
  RevivableRun,
  revivableModel,
  revivableTools,
} from '../../src/integrations/ai-sdk/index.ts';
import { Loop } from '../../src/loop/loop.ts';
import { Revival } from '../../src/revival/index.ts';
import { Session } from '../../src/transcript/session.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import { recordsOf, shapeOf } from '../loop/support/harness.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';

/*
 * An AI SDK program made revivable by wrapping: the transcript its wrapped model and tools
 * write has the Loop's shape and write order, and reads as a Loop's would.
 */

const SCRIPT = [
  { text: 'Sending.', calls: [{ id: 'c1', name: 'send', input: { to: 'ann' } }] },
  { text: 'Sent.' },
];

function sendTool(effects: string[]) {
  return tool({
    description: 'Send a note',
    inputSchema: z.object({ to: z.string() }),
    execute: async ({ to }, { toolCallId }) => {
      effects.push(`${toolCallId}:${to}`);
      return `sent to ${to}`;
    },
  });
}

async function withFolder(body: (folder: string) => Promise<void>) {
  const folder = await makeTempFolder('llm-agent-ai-sdk-');
  try {
    await body(folder);
  } finally {
    await removeFolder(folder);
  }
}

/** What the Loop writes for the same script, to compare shapes with. */
async function loopShape(folder: string): Promise<string[]> {
  const path = join(folder, 'loop.jsonl');
  const session = await Session.create(path, {
    agentId: 'main',
    agentType: 'main',
    label: 'main',
    model: 'm',
  });
  try {
    const model = new ScriptedModel(SCRIPT);
    await new Loop({
      backends: [model.model],
      writer: session,
      tools: { send: sendTool([]) },
    }).start('Send ann a note.');
  } finally {
    await session.close();
  }
  return shapeOf(await recordsOf(path));
}

const programs = {
  'ToolLoopAgent.generate': (model: ScriptedModel, tools: ReturnType<typeof revivableTools>) =>
    new ToolLoopAgent({ model: revivableModel(model.model), tools })
      .generate({ prompt: 'Send ann a note.' })
      .then((r) => r.text),
  'ToolLoopAgent.stream': async (
    model: ScriptedModel,
    tools: ReturnType<typeof revivableTools>,
  ) => {
    const result = await new ToolLoopAgent({ model: revivableModel(model.model), tools }).stream({
      prompt: 'Send ann a note.',
    });
    return result.text;
  },
  generateText: (model: ScriptedModel, tools: ReturnType<typeof revivableTools>) =>
    generateText({
      model: revivableModel(model.model),
      tools,
      stopWhen: stepCountIs(5),
      prompt: 'Send ann a note.',
    }).then((r) => r.text),
  streamText: (model: ScriptedModel, tools: ReturnType<typeof revivableTools>) =>
    streamText({
      model: revivableModel(model.model),
      tools,
      stopWhen: stepCountIs(5),
      prompt: 'Send ann a note.',
    }).text,
};

for (const [name, program] of Object.entries(programs)) {
  test(`${name}, wrapped: the transcript has the Loop's shape, the dispatch declared, and reads finished`, () =>
    withFolder(async (folder) => {
      const path = join(folder, `${name}.jsonl`);
      const effects: string[] = [];
      const model = new ScriptedModel(SCRIPT);
      const tools = revivableTools(
        { send: sendTool(effects) },
        { idempotency: { send: 'side-effect' } },
      );
      const opened = await RevivableRun.open({ path });
      assert.ok(opened.ok);
      try {
        const text = await opened.run.within(() => program(model, tools));
        assert.equal(text, 'Sent.');
      } finally {
        await opened.run.close();
      }
      assert.deepEqual(effects, ['c1:ann']);
      assert.deepEqual(model.violations, []);
      const shape = shapeOf(await recordsOf(path));
      assert.deepEqual(shape, await loopShape(folder));
      const found = await Revival.inspect({ path, maxRevivals: 3 });
      assert.equal(found.reason, 'finished');
    }));
}

test('a tool whose idempotency no one declared is recorded side-effect, undeclared; a declared one is not marked', () =>
  withFolder(async (folder) => {
    const path = join(folder, 'undeclared.jsonl');
    const model = new ScriptedModel([
      {
        calls: [
          { id: 'c1', name: 'send', input: { to: 'ann' } },
          { id: 'c2', name: 'note', input: { to: 'bob' } },
        ],
      },
      { text: 'Sent.' },
    ]);
    const tools = revivableTools(
      { send: sendTool([]), note: sendTool([]) },
      { idempotency: { note: 'idempotent' } },
    );
    const opened = await RevivableRun.open({ path });
    assert.ok(opened.ok);
    try {
      await opened.run.within(() =>
        generateText({
          model: revivableModel(model.model),
          tools,
          stopWhen: stepCountIs(3),
          prompt: 'Go.',
        }),
      );
    } finally {
      await opened.run.close();
    }
    const dispatches = (await recordsOf(path)).flatMap((record) =>
      record.type === 'tool-dispatched'
        ? [[record.toolName, record.idempotency, record.idempotencyDeclared, record.v]]
        : [],
    );
    // Format 2: each dispatch carries its call's idempotency key, as the Loop's do.
    assert.deepEqual(dispatches.sort(), [
      ['note', 'idempotent', undefined, 2],
      ['send', 'side-effect', false, 2],
    ]);
  }));

test('a wrapped model called outside a run says so', async () => {
  const model = new ScriptedModel(SCRIPT);
  await assert.rejects(
    generateText({ model: revivableModel(model.model), prompt: 'Hi', maxRetries: 0 }),
    /called outside a revivable run/,
  );
});

test('a file part is refused: a transcript cannot store it', () =>
  withFolder(async (folder) => {
    const opened = await RevivableRun.open({ path: join(folder, 'file.jsonl') });
    assert.ok(opened.ok);
    try {
      const model = new ScriptedModel([{ text: 'A cat.' }]);
      await assert.rejects(
        opened.run.within(() =>
          generateText({
            model: revivableModel(model.model),
            maxRetries: 0,
            messages: [
              {
                role: 'user',
                content: [{ type: 'file', data: new Uint8Array([1]), mediaType: 'image/png' }],
              },
            ],
          }),
        ),
        /file part, which a transcript cannot store/,
      );
    } finally {
      await opened.run.close();
    }
  }));
