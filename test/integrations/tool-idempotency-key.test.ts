import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  Agent,
  type Model,
  type ModelResponse,
  run,
  tool as agentsTool,
  Usage,
} from '@openai/agents';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import {
  RevivableRun,
  revivableModel,
  revivableTools,
  toolIdempotencyKey,
} from '../../src/integrations/ai-sdk/index.ts';
import {
  functionToolIdempotencyKey,
  revivableAgentsModel,
  revivableFunctionTools,
  TranscriptSession,
} from '../../src/integrations/openai-agents/index.ts';
import { Loop } from '../../src/loop/loop.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import { Session } from '../../src/transcript/session.ts';
import { idempotencyKeyOf } from '../../src/transcript/idempotency-key.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { recordsOf } from '../loop/support/harness.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';

/*
 * Wrapped AI SDK and OpenAI Agents tools get their call's idempotency key, as the Loop's tools
 * do: the key recorded in the call's dispatch before the tool started (so a reconcile can ask by
 * it), derived from the run and the call id. A tool outside a wrapper is told it has none.
 */

async function dispatchedKeys(path: string): Promise<Map<string, string | undefined>> {
  const keys = new Map<string, string | undefined>();
  let meta: { agentId: string; createdAt: string } | undefined;
  for (const record of (await recordsOf(path)).filter(isKnownRecord)) {
    if (record.type === 'session-meta') meta = { agentId: record.agentId, createdAt: record.at };
    if (record.type === 'tool-dispatched') keys.set(record.callId, record.idempotencyKey);
  }
  assert.ok(meta !== undefined);
  keys.set('expected', idempotencyKeyOf(meta, 'c1'));
  return keys;
}

test('AI SDK: revivableTools hands execute the key its dispatch recorded', async () => {
  const folder = await makeTempFolder('llm-agent-key-');
  try {
    const path = join(folder, 'main.jsonl');
    const seen: string[] = [];
    const tools = revivableTools(
      {
        send: tool({
          inputSchema: z.object({ to: z.string() }),
          execute: async ({ to }, options) => {
            seen.push(toolIdempotencyKey(options));
            return `sent to ${to}`;
          },
        }),
      },
      { idempotency: { send: 'side-effect' } },
    );
    const model = new ScriptedModel([
      { text: 'Sending.', calls: [{ id: 'c1', name: 'send', input: { to: 'ann' } }] },
      { text: 'Sent.' },
    ]);
    const opened = await RevivableRun.open({ path });
    assert.ok(opened.ok);
    await opened.run.within(() =>
      generateText({
        model: revivableModel(model.model),
        tools,
        prompt: 'Send ann a note.',
        stopWhen: stepCountIs(5),
      }),
    );
    await opened.run.close();
    const keys = await dispatchedKeys(path);
    assert.match(seen[0] ?? '', /^ik-[0-9a-f]{32}$/);
    assert.deepEqual(seen, [keys.get('c1')], 'the tool got the recorded key');
    assert.equal(keys.get('c1'), keys.get('expected'));
    assert.throws(
      () => toolIdempotencyKey({ toolCallId: 'c1' }),
      /carry no idempotency key — wrap the tools with revivableTools/,
    );
  } finally {
    await removeFolder(folder);
  }
});

test('the Loop hands an AI SDK tool() the key its dispatch recorded, read the same way', async () => {
  const folder = await makeTempFolder('llm-agent-key-');
  try {
    const path = join(folder, 'loop.jsonl');
    const seen: string[] = [];
    const session = await Session.create(path, {
      agentId: 'main',
      agentType: 'main',
      label: 'main',
      model: 'm',
    });
    try {
      const model = new ScriptedModel([
        { text: 'Sending.', calls: [{ id: 'c1', name: 'send', input: { to: 'ann' } }] },
        { text: 'Sent.' },
      ]);
      const send = tool({
        inputSchema: z.object({ to: z.string() }),
        execute: async ({ to }, options) => {
          seen.push(toolIdempotencyKey(options));
          return `sent to ${to}`;
        },
      });
      await new Loop({ backends: [model.model], writer: session, tools: { send } }).start(
        'Send ann a note.',
      );
    } finally {
      await session.close();
    }
    const keys = await dispatchedKeys(path);
    assert.match(seen[0] ?? '', /^ik-[0-9a-f]{32}$/);
    assert.deepEqual(seen, [keys.get('c1')]);
    assert.equal(keys.get('c1'), keys.get('expected'));
  } finally {
    await removeFolder(folder);
  }
});

function scriptedAgentsModel(): Model {
  const script: ModelResponse['output'][] = [
    [
      {
        type: 'function_call',
        callId: 'c1',
        name: 'send',
        arguments: '{"to":"ann"}',
        status: 'completed',
      },
    ],
    [
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Sent.' }],
      },
    ],
  ];
  return {
    async getResponse(): Promise<ModelResponse> {
      const output = script.shift();
      if (output === undefined) throw new Error('the script has no more responses');
      return { usage: new Usage(), output };
    },
    getStreamedResponse(): AsyncIterable<never> {
      throw new Error('not scripted');
    },
  };
}

test('OpenAI Agents: revivableFunctionTools hands execute the key its dispatch recorded', async () => {
  const folder = await makeTempFolder('llm-agent-key-');
  try {
    const path = join(folder, 'mailer.jsonl');
    const seen: string[] = [];
    const send = agentsTool({
      name: 'send',
      description: 'Send a report',
      parameters: z.object({ to: z.string() }),
      execute: async ({ to }, _context, details) => {
        seen.push(functionToolIdempotencyKey(details));
        return `sent to ${to}`;
      },
    });
    const agent = new Agent({
      name: 'mailer',
      instructions: 'You send reports.',
      model: revivableAgentsModel(scriptedAgentsModel()),
      tools: revivableFunctionTools([send], { idempotency: { send: 'side-effect' } }),
    });
    const opened = await TranscriptSession.open({ path });
    assert.ok(opened.ok);
    const { session } = opened;
    await session.within(() => run(agent, 'Send ann the report.', { session }));
    await session.close();
    const keys = await dispatchedKeys(path);
    assert.match(seen[0] ?? '', /^ik-[0-9a-f]{32}$/);
    assert.deepEqual(seen, [keys.get('c1')], 'the tool got the recorded key');
    assert.equal(keys.get('c1'), keys.get('expected'));
    assert.throws(
      () => functionToolIdempotencyKey({ toolCall: {} }),
      /carries no idempotency key — wrap the tools with revivableFunctionTools/,
    );
  } finally {
    await removeFolder(folder);
  }
});
