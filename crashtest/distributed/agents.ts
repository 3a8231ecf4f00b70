import { z } from 'zod';
import { createPromptModel, type ScriptPrompt } from '../../src/demo/prompt-model.ts';
import type { AgentRegistry } from '../../src/subagents/agent-definition.ts';
import { agentIdForSpawn } from '../../src/subagents/agent-id.ts';

/*
 * The distributed crashtest's agents, the same in every worker process: `solo` makes
 * SOLO_STEPS calls of `effect` (a side effect the ledger witnesses) and answers; `parent`
 * starts two `child` runs in one turn, joins both and answers with what the join said; `child`
 * makes CHILD_STEPS calls of `effect` and answers. Every answer names the run's task, so an
 * answer in a parent's join can be matched to the child that gave it.
 */

export const SOLO_STEPS = 4;
export const CHILD_STEPS = 3;

const effectInput = z.object({ step: z.number().int() });

const taskOf = (prompt: ScriptPrompt): string =>
  prompt.turns.find((turn) => turn.role === 'user')?.text ?? '';

const effectsDone = (prompt: ScriptPrompt): number =>
  prompt.turns.flatMap((turn) => turn.toolResults).filter((result) => result.toolName === 'effect')
    .length;

/** A model that calls `effect` `steps` times, one per turn, then answers `<type> done: <task>`. */
function stepper(type: string, steps: number) {
  return createPromptModel({
    script: (prompt) => {
      const done = effectsDone(prompt);
      if (done < steps) return { toolCalls: [{ toolName: 'effect', input: { step: done + 1 } }] };
      return { text: `${type} done: ${taskOf(prompt)}` };
    },
  });
}

/**
 * The agents; `effect(run, callId, key)` is the side effect (the worker records it in the
 * ledger under the call's idempotency key) and `pause()` how long it then takes. With
 * `executed(key)`, `effect` has a reconcile: completed (with the output `effect` gives) when the
 * ledger holds the key, did not happen otherwise.
 */
export function distributedAgents(
  effect: (run: string, callId: string, key: string) => Promise<void>,
  pause: () => Promise<void>,
  executed?: (key: string) => Promise<boolean>,
): AgentRegistry {
  const reconcile =
    executed === undefined
      ? {}
      : {
          reconcile: async (
            input: z.infer<typeof effectInput>,
            context: { idempotencyKey: string },
          ) =>
            (await executed(context.idempotencyKey))
              ? { outcome: 'completed' as const, output: `effect ${input.step} done` }
              : { outcome: 'did-not-happen' as const },
        };
  const effectTool = {
    ...reconcile,
    name: 'effect',
    description: 'Does something that cannot be undone',
    inputSchema: effectInput,
    idempotency: 'side-effect' as const,
    execute: async (
      input: z.infer<typeof effectInput>,
      context: { callId: string; idempotencyKey: string; writer: { path: string } },
    ) => {
      const path = context.writer.path;
      await effect(path.slice(path.indexOf('#') + 1), context.callId, context.idempotencyKey);
      await pause();
      return `effect ${input.step} done`;
    },
  };
  return {
    solo: {
      description: 'Works alone',
      system: 'solo',
      canSpawn: false,
      model: stepper('solo', SOLO_STEPS),
      tools: [effectTool as never],
    },
    child: {
      description: 'Does a part',
      system: 'child',
      canSpawn: false,
      model: stepper('child', CHILD_STEPS),
      tools: [effectTool as never],
    },
    parent: {
      description: 'Splits its task in two',
      system: 'parent',
      model: createPromptModel({
        script: (prompt) => {
          const task = taskOf(prompt);
          const spawns = prompt.turns
            .flatMap((turn) => turn.toolCalls)
            .filter((call) => call.toolName === 'spawn_agent');
          if (spawns.length === 0) {
            return {
              toolCalls: ['A', 'B'].map((part) => ({
                toolName: 'spawn_agent',
                input: { agentType: 'child', task: `${task} part ${part}` },
              })),
            };
          }
          const joined = prompt.turns
            .flatMap((turn) => turn.toolResults)
            .find((result) => result.toolName === 'task_wait');
          if (joined === undefined) {
            // The ids follow from the spawn calls, so a spawn whose result a crash lost is joined too.
            const agentIds = spawns.map((call) =>
              agentIdForSpawn({ agentType: 'child', callId: call.callId, parentAgentId: 'main' }),
            );
            return { toolCalls: [{ toolName: 'task_wait', input: { agentIds } }] };
          }
          return { text: `parent done: ${task}: ${JSON.stringify(joined.output)}` };
        },
      }),
    },
  };
}
