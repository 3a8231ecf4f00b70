import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  Agent,
  type Model,
  type ModelResponse,
  run,
  setTracingDisabled,
  tool,
  Usage,
} from '@openai/agents';
import { z } from 'zod';
import {
  revivableAgentsModel,
  revivableFunctionTools,
  TranscriptSession,
} from '../../src/integrations/openai-agents/index.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { recordsOf } from '../loop/support/harness.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';

/*
 * A TranscriptSession run that is not killed: OpenAI Agents' runner hands run()'s input to the
 * session only when run() returns, so the wrapped model records it before the model reads it —
 * and the session, handed it at the end, does not record it twice. A second run() on the same
 * session with new input does the same.
 */

setTracingDisabled(true);

const message = (text: string): ModelResponse['output'][number] => ({
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text }],
});

test('TranscriptSession: each run() input is in the transcript before the model reads it, and once', async () => {
  const folder = await makeTempFolder('llm-agent-transcript-session-');
  try {
    const path = join(folder, 'main.jsonl');
    /** What the transcript's last user turn said each time the model was called. */
    const seen: string[] = [];
    const script: ModelResponse['output'][] = [
      [
        message('Sending.'),
        {
          type: 'function_call',
          callId: 'c1',
          name: 'send',
          arguments: '{"to":"ann"}',
          status: 'completed',
        },
      ],
      [message('Sent to ann.')],
      [message('Bob has it too.')],
    ];
    const model: Model = {
      async getResponse() {
        const view = conversationView(await recordsOf(path));
        const user = view.findLast((entry) => entry.role === 'user');
        seen.push(user?.content[0]?.type === 'text' ? user.content[0].text : '(none)');
        const output = script.shift();
        if (output === undefined) throw new Error('the script has no more responses');
        return { usage: new Usage(), output };
      },
      getStreamedResponse() {
        throw new Error('not scripted');
      },
    };
    const send = tool({
      name: 'send',
      description: 'Send a report',
      parameters: z.object({ to: z.string() }),
      execute: async ({ to }) => `sent to ${to}`,
    });
    const agent = new Agent({
      name: 'mailer',
      model: revivableAgentsModel(model),
      tools: revivableFunctionTools([send]),
    });
    const opened = await TranscriptSession.open({ path });
    assert.ok(opened.ok);
    const { session } = opened;
    const first = await session.within(() => run(agent, 'Send ann the report.', { session }));
    assert.equal(first.finalOutput, 'Sent to ann.');
    const second = await session.within(() => run(agent, 'And bob?', { session }));
    assert.equal(second.finalOutput, 'Bob has it too.');
    await session.close();

    assert.deepEqual(seen, ['Send ann the report.', 'Send ann the report.', 'And bob?']);
    const view = conversationView(await recordsOf(path));
    assert.deepEqual(
      view.map((entry) => entry.role),
      ['user', 'assistant', 'tool', 'assistant', 'user', 'assistant'],
    );
  } finally {
    await removeFolder(folder);
  }
});
