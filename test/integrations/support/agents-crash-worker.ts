/**
 * One process of an OpenAI Agents JS program: `node agents-crash-worker.ts PATH` runs an
 * Agent with a scripted Model over a TranscriptSession at PATH (opening it revives it when its
 * process died) and prints the final output. CRASH_PHASE=first makes the tool kill the process.
 */
import { appendFileSync } from 'node:fs';
import {
  Agent,
  type Model,
  type ModelRequest,
  type ModelResponse,
  run,
  tool,
  Usage,
} from '@openai/agents';
import { z } from 'zod';
import {
  revivableAgentsModel,
  revivableFunctionTools,
  TranscriptSession,
} from '../../../src/integrations/openai-agents/index.ts';
import { FINAL, PROMPT, phaseOf } from './crash-program.ts';

const [path] = process.argv.slice(2) as [string];
const phase = phaseOf(process.env);

/** Answers a script, one response per call; every input it is sent goes to PATH.prompts. */
function scriptedAgentsModel(): Model {
  const script: ModelResponse['output'][] =
    phase === 'first'
      ? [
          [
            {
              type: 'function_call',
              callId: 'call_send_1',
              name: 'send',
              arguments: '{"to":"ann"}',
              status: 'completed',
            },
          ],
        ]
      : [
          [
            {
              type: 'message',
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: FINAL }],
            },
          ],
        ];
  return {
    async getResponse(request: ModelRequest): Promise<ModelResponse> {
      appendFileSync(`${path}.prompts`, `${JSON.stringify(request.input)}\n`);
      const output = script.shift();
      if (output === undefined) throw new Error('the script has no more responses');
      return { usage: new Usage(), output };
    },
    getStreamedResponse(): AsyncIterable<never> {
      throw new Error('not scripted');
    },
  };
}

const send = tool({
  name: 'send',
  description: 'Send a report by email',
  parameters: z.object({ to: z.string() }),
  execute: async ({ to }, _context, details) => {
    appendFileSync(`${path}.effects`, `start ${details?.toolCall?.callId}\n`);
    if (phase === 'first') {
      process.kill(process.pid, 'SIGKILL');
      await new Promise(() => undefined);
    }
    return `sent to ${to}`;
  },
});

const agent = new Agent({
  name: 'mailer',
  instructions: 'You send reports.',
  model: revivableAgentsModel(scriptedAgentsModel()),
  tools: revivableFunctionTools([send]),
});

const opened = await TranscriptSession.open({ path });
if (!opened.ok) throw new Error(opened.detail);
const { session } = opened;
const result = await session.within(() => run(agent, session.revived ? [] : PROMPT, { session }));
await session.close();
console.log(result.finalOutput);
