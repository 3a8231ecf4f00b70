/**
 * A wrapped AI SDK program whose model is hostile: `node attack/wrapper-program.ts PATH` runs a
 * ToolLoopAgent (revivableModel, revivableTools) on the transcript at PATH. Its scripted model
 * puts ATTACK_PAYLOAD (JSON) in its text, in a tool call's id and in the call's input; the tool
 * returns it once, then, on its second call, SIGKILLs the process while it runs, leaving the
 * dispatch open. So the transcript the wrapper writes holds model-controlled text everywhere a
 * reader prints from, and ends in a run that died mid-tool.
 */
import { ToolLoopAgent, tool } from 'ai';
import { z } from 'zod';
import { RevivableRun, revivableModel, revivableTools } from '../src/integrations/ai-sdk/index.ts';
import { ScriptedModel } from '../src/testing/index.ts';

const [path] = process.argv.slice(2) as [string];
const payload = JSON.parse(process.env.ATTACK_PAYLOAD ?? '""') as string;
const model = new ScriptedModel([
  {
    text: `first ${payload}`,
    calls: [{ id: `call-1${payload}`, name: 'note', input: { text: payload } }],
  },
  {
    text: `second ${payload}`,
    calls: [{ id: `call-2${payload}`, name: 'note', input: { text: payload } }],
  },
]);
let calls = 0;
const agent = new ToolLoopAgent({
  model: revivableModel(model.model),
  tools: revivableTools({
    note: tool({
      inputSchema: z.object({ text: z.string() }),
      execute: async ({ text }) => {
        calls += 1;
        if (calls === 2) {
          process.kill(process.pid, 'SIGKILL');
          await new Promise(() => undefined);
        }
        return `noted ${text}`;
      },
    }),
  }),
});
const opened = await RevivableRun.open({ path, label: `label ${payload}` });
if (!opened.ok) throw new Error(opened.detail);
await opened.run.within(() => agent.generate({ prompt: `task ${payload}` }));
