import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { AgentRegistry } from '../subagents/agent-definition.ts';
import { createPromptModel, type ScriptPrompt } from './prompt-model.ts';

/**
 * The agents of `llm-agent demo --database`: a `deployer` whose `deploy` tool records each
 * deployment in `ledger.txt` in the working folder — the side effect the demo counts — and
 * then takes its time: `release-1` never finishes (its worker is killed inside it), `release-2`
 * takes a few seconds (its worker is paused inside it). The scripted model deploys the release
 * named in its task, and after an interrupted deploy checks before anything else.
 *
 * @example
 * const agents = databaseDemoAgents({ cwd: '/tmp/demo' });
 */
export function databaseDemoAgents(context: { cwd: string }): AgentRegistry {
  const ledger = join(context.cwd, 'ledger.txt');
  const lastResult = (prompt: ScriptPrompt) =>
    prompt.turns.flatMap((turn) => turn.toolResults).at(-1);
  return {
    deployer: {
      description: 'Deploys one release',
      system: 'You deploy the release you are given, once.',
      model: createPromptModel({
        modelId: 'demo-deployer',
        script: (prompt) => {
          const last = lastResult(prompt);
          const release = prompt.turns.find((turn) => turn.role === 'user')?.text ?? '';
          if (last === undefined)
            return { toolCalls: [{ toolName: 'deploy', input: { release } }] };
          return {
            text: last.isError
              ? `The deploy of ${release} was interrupted and its outcome is unknown; I will check what is live before deploying again.`
              : `${release} is deployed.`,
          };
        },
      }),
      tools: [
        {
          name: 'deploy',
          description: 'Deploys a release',
          inputSchema: z.object({ release: z.string() }),
          idempotency: 'side-effect',
          execute: async ({ release }) => {
            appendFileSync(ledger, `${release}\n`);
            if (release === 'release-1')
              await new Promise(() => setInterval(() => undefined, 1000));
            await new Promise((done) => setTimeout(done, 3000));
            return `${release} deployed`;
          },
        },
      ],
    },
  };
}

/** The module form `llm-agent worker --agents` loads. */
export default databaseDemoAgents;
