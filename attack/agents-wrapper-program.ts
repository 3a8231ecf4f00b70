/**
 * A wrapped OpenAI Agents JS program whose model is hostile: `node
 * attack/agents-wrapper-program.ts PATH` runs an Agent (revivableAgentsModel,
 * revivableFunctionTools) over a TranscriptSession at PATH. Its scripted model puts
 * ATTACK_PAYLOAD (JSON) in its text, in a function call's id and in the call's arguments; the
 * tool returns it once, then, on its second call, SIGKILLs the process while it runs, leaving
 * the dispatch open — attack/wrapper-program.ts in the other SDK.
 */
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
} from '../src/integrations/openai-agents/index.ts';

setTracingDisabled(true);
const [path] = process.argv.slice(2) as [string];
const payload = JSON.parse(process.env.ATTACK_PAYLOAD ?? '""') as string;
const turn = (text: string, callId: string): ModelResponse['output'] => [
  {
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text }],
  },
  {
    type: 'function_call',
    callId,
    name: 'note',
    arguments: JSON.stringify({ text: payload }),
    status: 'completed',
  },
];
const script = [
  turn(`first ${payload}`, `call-1${payload}`),
  turn(`second ${payload}`, `call-2${payload}`),
];
const model: Model = {
  getResponse: async () => {
    const output = script.shift();
    if (output === undefined) throw new Error('the script has no more turns');
    return { usage: new Usage(), output };
  },
  getStreamedResponse: () => {
    throw new Error('not scripted');
  },
};
let calls = 0;
const note = tool({
  name: 'note',
  description: 'Note a text',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => {
    calls += 1;
    if (calls === 2) {
      process.kill(process.pid, 'SIGKILL');
      await new Promise(() => undefined);
    }
    return `noted ${text}`;
  },
});
const agent = new Agent({
  name: 'noter',
  model: revivableAgentsModel(model),
  tools: revivableFunctionTools([note]),
});
const opened = await TranscriptSession.open({ path, label: `label ${payload}` });
if (!opened.ok) throw new Error(opened.detail);
const { session } = opened;
await session.within(() => run(agent, `task ${payload}`, { session }));
