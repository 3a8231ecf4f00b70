import { z } from 'zod';
import { createPromptModel, type ScriptPrompt } from '../../../src/demo/prompt-model.ts';
import type { AgentRegistry } from '../../../src/subagents/agent-definition.ts';
import { BACKGROUND_FRAME } from '../../../src/subagents/background-frame.ts';

/*
 * A parent and its children for workers over the PostgreSQL store, the same in the test and in
 * a worker process it kills: `lead` spawns one child (of the type its task names), joins it and
 * answers with what the join said; `quick` answers at once; `fetcher` calls `fetch` (a side
 * effect, run by `fetch` below) and answers with its result, or says the call was interrupted;
 * `patient` spawns a `quick` child and pauses, never joining, until the child's end is delivered.
 */

const results = (prompt: ScriptPrompt) => prompt.turns.flatMap((turn) => turn.toolResults);

/** The agents; `fetch` is what the fetcher's tool does (record it, then answer or hang). */
export function familyAgents(fetch: () => Promise<string>): AgentRegistry {
  return {
    lead: {
      description: 'Leads',
      system: 'lead',
      model: createPromptModel({
        script: (prompt) => {
          const done = results(prompt);
          const spawned = done.find((result) => result.toolName === 'spawn_agent');
          const joined = done.find((result) => result.toolName === 'task_wait');
          if (spawned === undefined) {
            const task = prompt.turns.find((turn) => turn.role === 'user')?.text ?? '';
            return {
              toolCalls: [
                {
                  toolName: 'spawn_agent',
                  input: { agentType: task.startsWith('fetch') ? 'fetcher' : 'quick', task },
                },
              ],
            };
          }
          if (joined === undefined) {
            const agentId = (spawned.output as { agentId: string }).agentId;
            return { toolCalls: [{ toolName: 'task_wait', input: { agentIds: [agentId] } }] };
          }
          return { text: `lead heard: ${JSON.stringify(joined.output)}` };
        },
      }),
    },
    patient: {
      description: 'Starts a child and does not wait for it',
      system: 'patient',
      model: createPromptModel({
        script: (prompt) => {
          const done = results(prompt);
          if (!done.some((result) => result.toolName === 'spawn_agent')) {
            return {
              toolCalls: [{ toolName: 'spawn_agent', input: { agentType: 'quick', task: 'ping' } }],
            };
          }
          const heard = prompt.turns.find(
            (turn) => turn.role === 'user' && turn.text.startsWith(BACKGROUND_FRAME),
          );
          if (heard !== undefined) return { text: `patient heard: ${heard.text}` };
          const pauses = done.filter((result) => result.toolName === 'pause').length;
          if (pauses >= 100) return { text: 'patient heard nothing' };
          return { toolCalls: [{ toolName: 'pause', input: {} }] };
        },
      }),
      tools: [
        {
          name: 'pause',
          description: 'Waits a moment',
          inputSchema: z.object({}),
          idempotency: 'read-only',
          execute: async () => {
            await new Promise((done) => setTimeout(done, 50));
            return 'paused';
          },
        },
      ],
    },
    quick: {
      description: 'Answers at once',
      system: 'quick',
      canSpawn: false,
      model: createPromptModel({
        script: (prompt) => ({
          text: `quick answer to ${prompt.turns.find((turn) => turn.role === 'user')?.text}`,
        }),
      }),
    },
    fetcher: {
      description: 'Fetches',
      system: 'fetcher',
      canSpawn: false,
      model: createPromptModel({
        script: (prompt) => {
          const last = results(prompt).at(-1);
          if (last === undefined)
            return { toolCalls: [{ toolName: 'fetch', input: { url: 'https://example.test' } }] };
          return {
            text: last.isError
              ? `fetch interrupted: ${String(last.output).slice(0, 40)}`
              : `fetched ${String(last.output)}`,
          };
        },
      }),
      tools: [
        {
          name: 'fetch',
          description: 'Fetches a page',
          inputSchema: z.object({ url: z.string() }),
          idempotency: 'side-effect',
          execute: () => fetch(),
        },
      ],
    },
  };
}
