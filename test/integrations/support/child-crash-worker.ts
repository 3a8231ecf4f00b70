/**
 * One process of an AI SDK program whose agent hands work to a child agent as a tool
 * (`revivableSubagent`): `node child-crash-worker.ts PATH` runs the parent on the transcript at
 * PATH (opening it revives it, and carries its child on, when its process died) and prints the
 * final text. CRASH_PHASE=first: the child's `send` tool SIGKILLs the process while it runs.
 */
import { appendFileSync } from 'node:fs';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { ToolLoopAgent, wrapLanguageModel } from 'ai';
import {
  RevivableRun,
  revivableModel,
  revivableSubagent,
  revivableTools,
} from '../../../src/integrations/ai-sdk/index.ts';
import { ScriptedModel } from '../../../src/testing/index.ts';
import { CHILD_FINAL, PARENT_FINAL, phaseOf, sendTool } from './crash-program.ts';

const [path] = process.argv.slice(2) as [string];
const phase = phaseOf(process.env);

function logged(scripted: ScriptedModel, file: string): LanguageModelV4 {
  return wrapLanguageModel({
    model: scripted.model,
    middleware: {
      specificationVersion: 'v4',
      transformParams: async ({ params }) => {
        appendFileSync(file, `${JSON.stringify(params.prompt)}\n`);
        return params;
      },
    },
  });
}

const childModel = new ScriptedModel(
  phase === 'first'
    ? [{ text: 'Sending.', calls: [{ id: 'call_send_1', name: 'send', input: { to: 'ann' } }] }]
    : [{ text: CHILD_FINAL }],
);
const parentModel = new ScriptedModel(
  phase === 'first'
    ? [
        {
          text: 'Asking the mailer.',
          calls: [{ id: 'call_mail_1', name: 'mailer', input: { task: 'Send ann the report.' } }],
        },
      ]
    : [{ text: PARENT_FINAL }],
);
const mailer = new ToolLoopAgent({
  model: revivableModel(logged(childModel, `${path}.child-prompts`)),
  tools: revivableTools({ send: sendTool(`${path}.effects`, phase) }),
  instructions: 'You send reports.',
});
const main = new ToolLoopAgent({
  model: revivableModel(logged(parentModel, `${path}.prompts`)),
  tools: {
    mailer: revivableSubagent(mailer, {
      agentType: 'mailer',
      description: 'Hand mail to the mailer',
    }),
  },
  instructions: 'You delegate.',
});

const opened = await RevivableRun.open({ path });
if (!opened.ok) throw new Error(opened.detail);
const { run } = opened;
const input =
  run.messages.length === 0 ? { prompt: 'Get ann her report.' } : { messages: run.messages };
const result = await run.within(() => main.generate(input));
await run.close();
console.log(result.text);
