import assert from 'node:assert/strict';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createAgentUIStreamResponse, type Agent, ToolLoopAgent, tool, type UIMessage } from 'ai';
import { z } from 'zod';
import {
  RevivableAgent,
  revivableModel,
  revivableTools,
} from '../../src/integrations/ai-sdk/index.ts';
import { Revival } from '../../src/revival/index.ts';
import { INTERRUPTED_MESSAGE, RESUME_NOTICE } from '../../src/revival/texts.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { recordsOf } from '../loop/support/harness.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';

/*
 * RevivableAgent implements the AI SDK's `Agent` interface, so a `useChat` route built on
 * `createAgentUIStreamResponse` works unchanged: each request is one revivable run of the chat's
 * transcript. A chat whose server died inside a tool goes on from the revived conversation,
 * whatever the browser's copy of the history says.
 */

const UNDECLARED = fileURLToPath(new URL('../fixtures/v1/undeclared.jsonl', import.meta.url));

function chatAgent(model: ScriptedModel, effects: string[]) {
  return new ToolLoopAgent({
    model: revivableModel(model.model),
    instructions: 'You send reports.',
    tools: revivableTools(
      {
        lookup: tool({
          description: 'Look a customer up',
          inputSchema: z.object({ name: z.string() }),
          execute: async ({ name }) => ({ name, email: `${name}@example.com` }),
        }),
        send_report: tool({
          description: 'Send the report by email',
          inputSchema: z.object({ to: z.string() }),
          execute: async ({ to }, { toolCallId }) => {
            effects.push(`${toolCallId}:${to}`);
            return `sent to ${to}`;
          },
        }),
      },
      { idempotency: { lookup: 'read-only' } },
    ),
  });
}

function userMessage(id: string, text: string): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

async function withFolder(body: (folder: string) => Promise<void>) {
  const folder = await makeTempFolder('llm-agent-revivable-agent-');
  try {
    await body(folder);
  } finally {
    await removeFolder(folder);
  }
}

/**
 * Read a UI message stream response to its end (its text deltas joined), then wait until the
 * run has let its transcript go.
 */
async function drain(response: Response, path: string): Promise<string> {
  const body = (await response.text())
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice('data: '.length)) as { type: string; delta?: string })
    .map((chunk) => (chunk.type === 'text-delta' ? chunk.delta : ''))
    .join('');
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const found = await Revival.inspect({ path, maxRevivals: 3 });
    if (found.reason !== 'running') return body;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${path} is still held after its stream ended`);
}

test('RevivableAgent is an AI SDK Agent: a useChat route through createAgentUIStreamResponse records the chat, one turn per request', () =>
  withFolder(async (folder) => {
    const path = join(folder, 'chat-1.jsonl');
    const effects: string[] = [];
    const model = new ScriptedModel([
      { text: 'Sending.', calls: [{ id: 'send-1', name: 'send_report', input: { to: 'ann' } }] },
      { text: 'Sent.' },
      { text: 'Yes, it went out.' },
    ]);
    const inner = chatAgent(model, effects);
    const agent: Agent<never, typeof inner.tools> = new RevivableAgent(inner, { path });
    assert.equal(agent.version, 'agent-v1');
    assert.equal(agent.tools, inner.tools);

    const first = [userMessage('u1', 'Email ann her report.')];
    const body = await drain(await createAgentUIStreamResponse({ agent, uiMessages: first }), path);
    assert.match(body, /Sent\./);
    assert.deepEqual(effects, ['send-1:ann']);

    // The browser sends its whole history again with the next message.
    const second: UIMessage[] = [
      ...first,
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          { type: 'text', text: 'Sending.' },
          {
            type: 'tool-send_report',
            toolCallId: 'send-1',
            state: 'output-available',
            input: { to: 'ann' },
            output: 'sent to ann',
          },
          { type: 'text', text: 'Sent.' },
        ],
      },
      userMessage('u2', 'Did it go out?'),
    ];
    const again = new RevivableAgent(inner, { path });
    const body2 = await drain(
      await createAgentUIStreamResponse({ agent: again, uiMessages: second }),
      path,
    );
    assert.match(body2, /Yes, it went out\./);
    assert.deepEqual(effects, ['send-1:ann'], 'no tool ran again');
    assert.deepEqual(model.violations, []);
    const conversation = conversationView(await recordsOf(path));
    const users = conversation.filter((message) => message.role === 'user');
    assert.deepEqual(
      users.map((message) =>
        message.content.map((part) => (part.type === 'text' ? part.text : '')),
      ),
      [['Email ann her report.'], ['Did it go out?']],
      'each user turn recorded once',
    );
    assert.equal((await Revival.inspect({ path, maxRevivals: 3 })).reason, 'finished');
  }));

test('a chat whose server died inside a tool goes on revived: the call answered interrupted, not run again, whatever the browser holds', () =>
  withFolder(async (folder) => {
    const path = join(folder, 'chat-2.jsonl');
    await copyFile(UNDECLARED, path); // killed inside send_report (send-1), dispatch durable
    const effects: string[] = [];
    const model = new ScriptedModel([{ text: 'It may have gone out; I did not send it again.' }]);
    const agent = new RevivableAgent(chatAgent(model, effects), { path });
    // What the browser kept: the tool part it never saw answered, then the user's next message.
    const uiMessages: UIMessage[] = [
      userMessage('u1', 'Email ann her report.'),
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          { type: 'text', text: 'Sending.' },
          {
            type: 'tool-send_report',
            toolCallId: 'send-1',
            state: 'input-available',
            input: { to: 'ann@example.com' },
          },
        ],
      },
      userMessage('u2', 'Did it go out?'),
    ];
    const body = await drain(await createAgentUIStreamResponse({ agent, uiMessages }), path);
    assert.match(body, /did not send it again/);
    assert.deepEqual(effects, [], 'the interrupted call was not run again');
    assert.deepEqual(model.violations, []);
    assert.equal(model.prompts.length, 1);
    const sent = JSON.stringify(model.prompts[0]);
    assert.ok(
      sent.includes(JSON.stringify(INTERRUPTED_MESSAGE).slice(1, -1)),
      'interrupted answer',
    );
    assert.ok(sent.includes(JSON.stringify(RESUME_NOTICE).slice(1, 40)), 'resume notice');
    assert.ok(sent.includes('Did it go out?'), "the user's new message");
    const found = await Revival.inspect({ path, maxRevivals: 3 });
    assert.equal(found.reason, 'finished');
    assert.equal(found.revivalsUsed, 1);
  }));

test('generate: the same run, closed after the answer; a run another process holds is refused by name', () =>
  withFolder(async (folder) => {
    const path = join(folder, 'chat-3.jsonl');
    const model = new ScriptedModel([{ text: 'Hello.' }]);
    const agent = new RevivableAgent(chatAgent(model, []), { path });
    const result = await agent.generate({ prompt: 'Hi' });
    assert.equal(result.text, 'Hello.');
    assert.equal((await Revival.inspect({ path, maxRevivals: 3 })).reason, 'finished');
    const { Session } = await import('../../src/transcript/session.ts');
    const holder = await Session.open(path);
    try {
      await assert.rejects(
        agent.generate({ prompt: 'Again' }),
        /RevivableAgent: .*chat-3\.jsonl: running/,
      );
    } finally {
      await holder.close();
    }
  }));
