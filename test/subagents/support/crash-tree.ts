import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { basename } from 'node:path';
import { z } from 'zod';
import type { ToolDefinition } from '../../../src/loop/types.ts';
import type { AgentRegistry } from '../../../src/subagents/agent-definition.ts';
import { BACKGROUND_FRAME } from '../../../src/subagents/background-frame.ts';
import { knownChildIds } from '../../support/known-children.ts';
import { type PolicyTurn, policyModel, resultsOf, taskOf } from './policy-model.ts';

/*
 * The tree the crash test kills: `main` spawns two workers in one turn and joins them; each
 * worker performs one side effect (a line appended, synced, to an execution log) and answers.
 * Every model is a pure function of its prompt, so the process that crashed and the process
 * that revives make the same decisions from the same conversation.
 */

export const MAIN_TASK = 'Coordinate alpha and beta.';
export const WORKER_TASKS = ['alpha', 'beta'];

/** The ids of children main knows: from spawn results and from running-again notices. */
function knownIds(turns: PolicyTurn[]): string[] {
  return knownChildIds(resultsOf(turns, 'spawn_agent'), turns);
}

/** What main has heard about each child: task_wait results and background deliveries. */
function heard(turns: PolicyTurn[]): Map<string, string> {
  const answers = new Map<string, string>();
  for (const result of resultsOf(turns, 'task_wait')) {
    const output = result.output as {
      results?: { agentId: string; status: string; answer?: string; reason?: string }[];
    };
    for (const item of output?.results ?? [])
      answers.set(item.agentId, item.answer ?? `failed: ${item.reason}`);
  }
  for (const turn of turns) {
    if (turn.role !== 'user' || !turn.text.startsWith(BACKGROUND_FRAME)) continue;
    const finished =
      /The child agent ([A-Za-z0-9._-]+) .* has finished\. Its final answer:\n\n(.*)$/s.exec(
        turn.text,
      );
    if (finished?.[1] !== undefined) answers.set(finished[1], finished[2] ?? '');
    const failed =
      /The child agent ([A-Za-z0-9._-]+) .* ended without a final answer \(([^)]*)\)/s.exec(
        turn.text,
      );
    if (failed?.[1] !== undefined) answers.set(failed[1], `failed: ${failed[2]}`);
  }
  return answers;
}

const mainPolicy = (turns: PolicyTurn[]) => {
  if (resultsOf(turns, 'spawn_agent').length === 0) {
    return {
      calls: WORKER_TASKS.map((task) => ({
        name: 'spawn_agent',
        input: { agentType: 'worker', task, label: task },
      })),
    };
  }
  const answers = heard(turns);
  const waiting = knownIds(turns).filter((id) => !answers.has(id));
  if (waiting.length > 0) return { calls: [{ name: 'task_wait', input: { agentIds: waiting } }] };
  return { text: `main done: ${[...answers.values()].sort().join('; ')}` };
};

/** A worker of the three-level tree: delegates to a helper, waits, then does its own effect. */
const delegatingWorkerPolicy = (turns: PolicyTurn[]) => {
  const task = taskOf(turns);
  if (resultsOf(turns, 'spawn_agent').length === 0) {
    return {
      calls: [
        {
          name: 'spawn_agent',
          input: { agentType: 'helper', task: `${task}/helper`, label: 'helper' },
        },
      ],
    };
  }
  const answers = heard(turns);
  const waiting = knownIds(turns).filter((id) => !answers.has(id));
  if (waiting.length > 0) return { calls: [{ name: 'task_wait', input: { agentIds: waiting } }] };
  if (resultsOf(turns, 'effect').length === 0)
    return { calls: [{ name: 'effect', input: { what: task } }] };
  return { text: `${task} handled with ${[...answers.values()].sort().join('; ')}` };
};

const workerPolicy = (turns: PolicyTurn[]) => {
  const task = taskOf(turns);
  if (resultsOf(turns, 'effect').length === 0)
    return { calls: [{ name: 'effect', input: { what: task } }] };
  return { text: `${task} handled` };
};

/** One line of the execution log: which transcript's call performed the side effect. */
export interface Execution {
  transcript: string;
  callId: string;
  what: string;
}

/**
 * The registry of the crash tree; `effect` appends to `logPath` and syncs it, then calls
 * `afterEffect` (a runner that dies there leaves the call in flight with its effect done). With
 * `deep`, each worker delegates to a helper of its own first: three levels.
 */
export function crashTreeRegistry(
  logPath: string,
  deep = false,
  afterEffect?: (execution: Execution) => void,
): AgentRegistry {
  const effect: ToolDefinition<{ what: string }> = {
    name: 'effect',
    description: 'Do the one thing this worker is for (not repeatable).',
    inputSchema: z.object({ what: z.string() }),
    idempotency: 'side-effect',
    execute: async ({ what }, context) => {
      const execution: Execution = {
        transcript: basename(context.writer.path),
        callId: context.callId,
        what,
      };
      const fd = openSync(logPath, 'a');
      try {
        writeSync(fd, `${JSON.stringify(execution)}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      afterEffect?.(execution);
      return `${what}: done`;
    },
  };
  return {
    main: {
      description: 'coordinates',
      model: policyModel('main', mainPolicy),
      system: 'You coordinate.',
    },
    worker: {
      description: 'does one thing',
      model: policyModel('worker', deep ? delegatingWorkerPolicy : workerPolicy),
      system: 'You work.',
      tools: [effect],
      canSpawn: deep,
    },
    helper: {
      description: 'helps a worker',
      model: policyModel('helper', workerPolicy),
      system: 'You help.',
      tools: [effect],
      canSpawn: false,
    },
  };
}
