import { basename } from 'node:path';
import type { JSONValue } from '@ai-sdk/provider';
import { z } from 'zod';
import { createPromptModel, type ScriptPrompt, type ScriptTurn } from '../src/demo/prompt-model.ts';
import { SUMMARY_INSTRUCTIONS } from '../src/loop/compaction.ts';
import type { ToolDefinition } from '../src/loop/types.ts';
import type { AgentRegistry } from '../src/subagents/agent-definition.ts';
import { BACKGROUND_FRAME } from '../src/subagents/background-frame.ts';
import { type PairingViolation, pairingViolations } from '../src/transcript/pairing-violations.ts';
import type { Message } from '../src/transcript/records.ts';
import { knownChildIds } from '../test/support/known-children.ts';

/*
 * The agents every crash test runs: scripted models whose decisions are a pure function of
 * the prompt (the process that crashed and the one that revives decide alike), tools whose
 * executions are logged outside the file system under test (the side list survives every
 * simulated crash, as the world outside a computer survives its power cut), and a check of
 * every prompt a model is sent against the providers' pairing rules.
 */

/** One execution of a side-effecting tool, as the outside world saw it. */
export interface Execution {
  /** The transcript's file name (`main.jsonl`, `worker-call_….jsonl`). */
  transcript: string;
  callId: string;
  what: string;
}

/** What the outside world remembers across crashes. */
export interface World {
  executions: Execution[];
  /** Pairing violations found in prompts sent to models. */
  violations: { prompt: number; violation: PairingViolation }[];
  prompts: number;
  /** Also told of each execution as it happens (a process writes it to a side file). */
  log?: (execution: Execution) => void;
}

/** A fresh world. */
export function newWorld(): World {
  return { executions: [], violations: [], prompts: 0 };
}

/** The tasks the `main` agent understands (the first user turn). */
export type MainPlan = 'parallel' | 'serial' | 'tree' | 'deep' | 'background';

/** The first user turn that starts `plan`. */
export function taskFor(plan: MainPlan): string {
  return `plan:${plan}`;
}

const SERIAL_STEPS = ['s1', 's2', 's3', 's4', 's5', 's6'];
const WORKERS = ['alpha', 'beta'];

/** Every `done-step:<key>` anywhere in the prompt: a step's result, or a summary naming it. */
function doneSteps(turns: ScriptTurn[]): Set<string> {
  const done = new Set<string>();
  for (const turn of turns) {
    const texts = [turn.text, ...turn.toolResults.map((result) => JSON.stringify(result.output))];
    for (const text of texts)
      for (const match of text.matchAll(/done-step:(\w+)/g)) done.add(match[1] ?? '');
  }
  return done;
}

/** Results of a tool in the prompt (interrupted ones included: the model is not retrying). */
function results(turns: ScriptTurn[], toolName: string) {
  return turns.flatMap((turn) => turn.toolResults.filter((result) => result.toolName === toolName));
}

function task(turns: ScriptTurn[]): string {
  return turns.find((turn) => turn.role === 'user')?.text ?? '';
}

/** Children main knows of: spawn results naming an id, and running-again notices. */
function knownChildren(turns: ScriptTurn[]): string[] {
  return knownChildIds(results(turns, 'spawn_agent'), turns);
}

/** Children main has heard the end of: join results and background deliveries. */
function heardChildren(turns: ScriptTurn[]): Set<string> {
  const heard = new Set<string>();
  for (const result of results(turns, 'task_wait')) {
    const output = result.output as { results?: { agentId?: unknown }[] } | null;
    for (const item of output?.results ?? [])
      if (typeof item.agentId === 'string') heard.add(item.agentId);
  }
  for (const turn of turns) {
    if (turn.role !== 'user' || !turn.text.startsWith(BACKGROUND_FRAME)) continue;
    const ended =
      /The child agent ([A-Za-z0-9._-]+) .* (has finished|ended without a final answer)/s.exec(
        turn.text,
      );
    if (ended?.[1] !== undefined) heard.add(ended[1]);
  }
  return heard;
}

type Answer = { text?: string; toolCalls?: { toolName: string; input: JSONValue }[] };

function call(toolName: string, input: JSONValue): { toolName: string; input: JSONValue } {
  return { toolName, input };
}

function mainPolicy(prompt: ScriptPrompt): Answer {
  const turns = prompt.turns;
  const plan = /plan:(\w+)/.exec(turns.map((turn) => turn.text).join('\n'))?.[1] ?? 'parallel';
  const done = doneSteps(turns);
  if (plan === 'parallel') {
    if (results(turns, 'effect').length === 0) {
      return {
        toolCalls: [
          call('effect', { what: 'p1' }),
          call('note', { key: 'k1' }),
          call('effect', { what: 'p2' }),
        ],
      };
    }
    return { text: `parallel done (${[...done].sort().join(',')})` };
  }
  if (plan === 'serial') {
    const next = SERIAL_STEPS.find((step) => !done.has(step));
    if (next !== undefined)
      return {
        text: `working on ${next} ${'·'.repeat(60)}`,
        toolCalls: [call('effect', { what: next })],
      };
    return { text: 'serial done' };
  }
  const spawned = results(turns, 'spawn_agent').length > 0;
  if (!spawned) {
    if (plan === 'deep')
      return {
        toolCalls: [
          call('spawn_agent', { agentType: 'lead', task: 'lead the work', label: 'lead' }),
        ],
      };
    if (plan === 'background') {
      return {
        toolCalls: [call('spawn_agent', { agentType: 'worker', task: 'gamma', label: 'gamma' })],
      };
    }
    return {
      toolCalls: WORKERS.map((name) =>
        call('spawn_agent', { agentType: 'worker', task: name, label: name }),
      ),
    };
  }
  if (plan === 'background' && !done.has('bg'))
    return { toolCalls: [call('effect', { what: 'bg' })] };
  const heard = heardChildren(turns);
  const waiting = knownChildren(turns).filter((id) => !heard.has(id));
  if (waiting.length > 0) return { toolCalls: [call('task_wait', { agentIds: waiting })] };
  return { text: `${plan} done: heard ${[...heard].sort().join(', ')}` };
}

function leadPolicy(prompt: ScriptPrompt): Answer {
  const turns = prompt.turns;
  if (results(turns, 'spawn_agent').length === 0) {
    return {
      toolCalls: [call('spawn_agent', { agentType: 'worker', task: 'delta', label: 'delta' })],
    };
  }
  const heard = heardChildren(turns);
  const waiting = knownChildren(turns).filter((id) => !heard.has(id));
  if (waiting.length > 0) return { toolCalls: [call('task_wait', { agentIds: waiting })] };
  return { text: `lead done: heard ${[...heard].sort().join(', ')}` };
}

function workerPolicy(prompt: ScriptPrompt): Answer {
  const what = task(prompt.turns);
  if (!doneSteps(prompt.turns).has(what) && results(prompt.turns, 'effect').length === 0) {
    return { toolCalls: [call('effect', { what })] };
  }
  return { text: `${what} handled` };
}

/** The compaction summariser: keeps the step markers, so a summarised run does not redo them. */
function summaryPolicy(prompt: ScriptPrompt): Answer {
  const plans = new Set<string>();
  for (const turn of prompt.turns)
    for (const match of turn.text.matchAll(/plan:\w+/g)) plans.add(match[0]);
  const steps = [...doneSteps(prompt.turns)].map((step) => `done-step:${step}`);
  return { text: `${[...plans].join(' ')} steps so far: ${steps.join(' ')}` };
}

/** The prompt as our messages, for the pairing check. */
function promptMessages(prompt: ScriptPrompt): Message[] {
  return prompt.turns
    .filter((turn) => turn.role !== 'system')
    .map((turn): Message => {
      if (turn.role === 'tool') {
        return {
          role: 'tool',
          content: turn.toolResults.map((result) => ({
            type: 'tool-result',
            callId: result.callId,
            toolName: result.toolName,
            output: null,
            isError: result.isError,
          })),
        };
      }
      return {
        role: turn.role,
        content: [
          { type: 'text', text: turn.text },
          ...turn.toolCalls.map((part) => ({
            type: 'tool-call' as const,
            callId: part.callId,
            toolName: part.toolName,
            input: null,
          })),
        ],
      };
    });
}

function scripted(world: World, name: string, policy: (prompt: ScriptPrompt) => Answer) {
  return createPromptModel({
    modelId: name,
    script: (prompt) => {
      if (prompt.system === SUMMARY_INSTRUCTIONS) return summaryPolicy(prompt);
      world.prompts += 1;
      for (const violation of pairingViolations(promptMessages(prompt))) {
        world.violations.push({ prompt: world.prompts, violation });
      }
      return policy(prompt);
    },
  });
}

/**
 * The registry of the crash tests: `main` (its plan is its task), `lead` (spawns one worker),
 * `worker` (one side effect). `compactAt` gives `main` a small token budget, so it compacts.
 *
 * @example
 * const registry = crashRegistry(world, { compactAt: 300 });
 */
export function crashRegistry(world: World, options: { compactAt?: number } = {}): AgentRegistry {
  const effect: ToolDefinition<{ what: string }> = {
    name: 'effect',
    description: 'Do one thing in the world (not repeatable).',
    inputSchema: z.object({ what: z.string() }),
    idempotency: 'side-effect',
    execute: async ({ what }, context) => {
      const execution = {
        transcript: basename(context.writer.path),
        callId: context.callId,
        what,
      };
      world.executions.push(execution);
      world.log?.(execution);
      return `done-step:${what}`;
    },
  };
  const note: ToolDefinition<{ key: string }> = {
    name: 'note',
    description: 'Read a note.',
    inputSchema: z.object({ key: z.string() }),
    idempotency: 'read-only',
    execute: async ({ key }) => ({ key, text: `note ${key}` }),
  };
  const tools = [effect, note] as unknown as ToolDefinition<never>[];
  const main: AgentRegistry[string] = {
    description: 'coordinates',
    model: scripted(world, 'main', mainPolicy),
    system: 'crashtest main',
    tools,
  };
  if (options.compactAt !== undefined)
    main.compaction = { maxTokens: options.compactAt, keepRecent: 3 };
  return {
    main,
    lead: {
      description: 'leads',
      model: scripted(world, 'lead', leadPolicy),
      system: 'crashtest lead',
      tools,
    },
    worker: {
      description: 'does one thing',
      model: scripted(world, 'worker', workerPolicy),
      system: 'crashtest worker',
      tools,
      canSpawn: false,
    },
  };
}
