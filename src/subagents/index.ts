/**
 * `llm-agent-revival/subagents`: runs that start runs. A {@link Composer} gives a parent run the
 * tools `spawn_agent` and `task_wait`, delivers a child's end while nobody waits, and takes a
 * revived child back under its original id so that a parent's pending join finds it. Where a
 * child's transcript lives is a {@link ChildLayout} (`agentsLayout`, `X.agents/<id>.jsonl`, is
 * what the composer writes). How a join's answer is worded and how a family is tracked are not
 * part of the API; docs/architecture.md ("The public surface") gives the reason for each name.
 *
 * @example
 * import { Composer } from 'llm-agent-revival/subagents';
 * const composer = new Composer({ registry });
 * const { run } = await composer.start({ path: 'runs/main.jsonl', agentType: 'main', task });
 *
 * @module
 */
// The Composer: what it takes, what it reports, what it starts, and a revived child handed
// back to it.
export {
  Composer,
  type ComposerEvent,
  type ComposerOptions,
  type RevivedChild,
  type StartedRun,
} from './composer.ts';
// How a child ended, as the Composer's events and `task_wait` report it.
export type { ChildOutcome } from './child-outcome.ts';
// Agent definitions, and the model specs they name (and the error of a bad one).
export {
  type AgentDefinition,
  type AgentRegistry,
  backendsOf,
  type ModelResolver,
} from './agent-definition.ts';
export { ModelSpecError, resolveModelSpec } from './model-spec.ts';
// The two tools and their names (a prompt or a test names them).
export { spawnAgentTool } from './spawn-agent-tool.ts';
export { taskWaitTool } from './task-wait-tool.ts';
export { SPAWN_AGENT_TOOL, TASK_WAIT_TOOL } from './join-output.ts';
// A child's id (an application may make its own, or wrap the default) and where it lives.
export { type AgentIdFactory, agentIdForSpawn } from './agent-id.ts';
export { agentsLayout, type ChildLayout } from './child-layout.ts';
// How an application reviving a child finds the spawn call it answers (Composer.reviveChild).
export { readSessionMeta } from './child-transcript.ts';
