/**
 * The OpenAI Agents JS program the crash tests kill and revive: an Agent with a scripted Model
 * (every input it is sent appended to PATH.prompts) and a side-effect function tool that logs
 * its start to PATH.effects and, in the first phase, SIGKILLs its own process while it runs.
 */
import { appendFileSync } from 'node:fs';
import {
  Agent,
  type Model,
  type ModelRequest,
  type ModelResponse,
  tool,
  Usage,
} from '@openai/agents';
import { z } from 'zod';
import {
  revivableAgentsModel,
  revivableFunctionTools,
} from '../../../src/integrations/openai-agents/index.ts';
import { FINAL, type Phase } from './crash-program.ts';

/** Answers a script, one response per call; every input it is sent goes to PATH.prompts. */
function scriptedAgentsModel(path: string, phase: Phase): Model {
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

/** The program's agent, built as a program builds it: wrapped model, wrapped tool. */
export function mailerAgent(path: string, phase: Phase) {
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

  return new Agent({
    name: 'mailer',
    instructions: 'You send reports.',
    model: revivableAgentsModel(scriptedAgentsModel(path, phase)),
    tools: revivableFunctionTools([send]),
  });
}
